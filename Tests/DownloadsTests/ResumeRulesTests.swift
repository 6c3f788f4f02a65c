import Downloads
import Fetch
import Foundation
import Testing

/// HTTP's resume rules, one case at a time, and the Content-Range parser they rely on.
@Suite("Resume rules and Content-Range")
struct ResumeRulesTests {
    @Test func contentRangeParsesTheForms() throws {
        let range = try #require(ContentRange("bytes 100-199/1000"))
        #expect(range.first == 100 && range.last == 199 && range.completeLength == 1000 && range.count == 100)
        #expect(ContentRange("bytes 100-199/*")?.completeLength == nil)
        let unsatisfied = try #require(ContentRange("bytes */1000"))
        #expect(unsatisfied.isUnsatisfied && unsatisfied.completeLength == 1000)
        #expect(ContentRange("BYTES 0-0/1")?.description == "bytes 0-0/1")
        for bad in ["bytes 200-100/1000", "bytes 0-1000/1000", "items 0-1/2", "bytes */*", "bytes -1-2/3", "bytes 1-2", "bytes a-b/c",
                    "bytes 0-99999999999999999999/1"] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test func planResumesOnlyFromCommittedBytesWithAValidator() {
        #expect(ResumeRules.plan(committedOffset: 500, localLength: 800, validator: "\"v1\"") == .from(offset: 500, validator: "\"v1\""))
        // A partial shorter than its record (it should not happen after fsync): only what is there.
        #expect(ResumeRules.plan(committedOffset: 500, localLength: 300, validator: "\"v1\"") == .from(offset: 300, validator: "\"v1\""))
        #expect(ResumeRules.plan(committedOffset: 500, localLength: 800, validator: nil) == .whole)
        #expect(ResumeRules.plan(committedOffset: 0, localLength: 800, validator: "\"v1\"") == .whole)
    }

    @Test func a206IsAcceptedOnlyWhenItContinuesExactly() {
        let plan = ResumeRules.Plan.from(offset: 500, validator: "\"v1\"")
        #expect(ResumeRules.decide(status: 206, contentRange: ContentRange("bytes 500-999/1000"), contentLength: 500, validator: "\"v1\"",
                                   plan: plan, expectedLength: 1000) == .append(at: 500, expectedLength: 1000))
        // Unknown expected length: the total becomes it.
        #expect(ResumeRules.decide(status: 206, contentRange: ContentRange("bytes 500-999/1000"), contentLength: 500, validator: nil,
                                   plan: plan, expectedLength: nil) == .append(at: 500, expectedLength: 1000))
        let wrongStart = ResumeRules.decide(status: 206, contentRange: ContentRange("bytes 400-999/1000"), contentLength: 600,
                                            validator: "\"v1\"", plan: plan, expectedLength: 1000)
        let wrongTotal = ResumeRules.decide(status: 206, contentRange: ContentRange("bytes 500-1199/1200"), contentLength: 700,
                                            validator: "\"v1\"", plan: plan, expectedLength: 1000)
        let changed = ResumeRules.decide(status: 206, contentRange: ContentRange("bytes 500-999/1000"), contentLength: 500,
                                         validator: "\"v2\"", plan: plan, expectedLength: 1000)
        let noRange = ResumeRules.decide(status: 206, contentRange: nil, contentLength: 500, validator: "\"v1\"", plan: plan, expectedLength: 1000)
        for decision in [wrongStart, wrongTotal, changed, noRange] {
            guard case .startOver = decision else {
                Issue.record("expected start over, got \(decision)")
                continue
            }
        }
    }

    @Test func a200MeansWriteFromTheStart() {
        let plan = ResumeRules.Plan.from(offset: 500, validator: "\"v1\"")
        #expect(ResumeRules.decide(status: 200, contentRange: nil, contentLength: 1200, validator: "\"v2\"", plan: plan, expectedLength: 1000)
                == .writeFromStart(expectedLength: 1200))
        #expect(ResumeRules.decide(status: 200, contentRange: nil, contentLength: nil, validator: nil, plan: .whole, expectedLength: nil)
                == .writeFromStart(expectedLength: nil))
        // A whole-file 206 to a plain request is the whole file.
        #expect(ResumeRules.decide(status: 206, contentRange: ContentRange("bytes 0-999/1000"), contentLength: 1000, validator: nil,
                                   plan: .whole, expectedLength: nil) == .writeFromStart(expectedLength: 1000))
    }

    @Test func a416IsCompleteOnlyWhenTheLengthsAgree() {
        #expect(ResumeRules.isComplete(after416: ContentRange("bytes */1000"), localLength: 1000, expectedLength: 1000))
        #expect(ResumeRules.isComplete(after416: ContentRange("bytes */1000"), localLength: 1000, expectedLength: nil))
        #expect(!ResumeRules.isComplete(after416: ContentRange("bytes */1000"), localLength: 900, expectedLength: nil))
        #expect(!ResumeRules.isComplete(after416: ContentRange("bytes */1000"), localLength: 1000, expectedLength: 1200))
        #expect(!ResumeRules.isComplete(after416: nil, localLength: 1000, expectedLength: 1000))
        #expect(!ResumeRules.isComplete(after416: ContentRange("bytes 0-9/1000"), localLength: 1000, expectedLength: 1000))
    }

    @Test func neverDoneShort() {
        #expect(!ResumeRules.isComplete(length: 999, expectedLength: 1000))
        #expect(!ResumeRules.isComplete(length: 1001, expectedLength: 1000))
        #expect(ResumeRules.isComplete(length: 1000, expectedLength: 1000))
    }

    @Test func strongValidatorPrefersAStrongETag() {
        let url = URL(string: "http://127.0.0.1/x")!
        func response(_ fields: [(String, String)]) -> FetchResponse {
            FetchResponse(status: 200, headers: HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }), url: url)
        }
        #expect(response([("ETag", "\"a\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]).strongValidator == "\"a\"")
        #expect(response([("ETag", "W/\"a\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")]).strongValidator
                == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(response([("ETag", "W/\"a\"")]).strongValidator == nil)
        #expect(response([("Content-Length", "12")]).contentLength == 12)
        #expect(response([("Content-Length", "-1")]).contentLength == nil)
    }
}
