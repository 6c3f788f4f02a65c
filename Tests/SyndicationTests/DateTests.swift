import Foundation
import Syndication
import Testing

/// Each case: the text as feeds write it, and the instant it means in RFC 3339 UTC (worked out by hand).
let dateCases: [(String, String)] = [
    // RFC 822 / 2822
    ("Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 +0000", "2003-06-10T04:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 -0500", "2003-06-10T09:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 +05:30", "2003-06-09T22:30:00Z"),
    ("10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),  // no weekday
    ("Wed, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),  // wrong weekday
    ("Tue, 10 Jun 03 04:00:00 GMT", "2003-06-10T04:00:00Z"),  // two-digit year
    ("Thu, 01 Jan 70 00:00:00 GMT", "1970-01-01T00:00:00Z"),
    ("Tue, 10 Jun 2003 04:00 GMT", "2003-06-10T04:00:00Z"),  // no seconds
    ("Tue,  10  Jun  2003   04:00:00   GMT", "2003-06-10T04:00:00Z"),  // extra spaces
    ("Tue, 10 Jun 2003 04:00:00 EST", "2003-06-10T09:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 PDT", "2003-06-10T11:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 CDT", "2003-06-10T09:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 Z", "2003-06-10T04:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 A", "2003-06-10T03:00:00Z"),  // military: A is +1
    ("Tue, 10 Jun 2003 04:00:00 N", "2003-06-10T05:00:00Z"),  // military: N is -1
    ("Tue, 10 Jun 2003 04:00:00 Y", "2003-06-10T16:00:00Z"),  // military: Y is -12
    ("Tuesday, 10 June 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),  // full names
    ("Thurs, 12 Jun 2003 04:00:00 GMT", "2003-06-12T04:00:00Z"),
    ("Tue, 10 Jun 2003 04:00:00 +0000 (UTC)", "2003-06-10T04:00:00Z"),  // a comment after the zone
    ("Tue, 10 Jun 2003 04:00:00", "2003-06-10T04:00:00Z"),  // no zone: UTC
    ("10-Jun-2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),
    ("Jun 10, 2003 4:00 PM", "2003-06-10T16:00:00Z"),
    ("June 10, 2003", "2003-06-10T00:00:00Z"),
    ("Sat, 29 Feb 2020 23:59:59 +0100", "2020-02-29T22:59:59Z"),
    // RFC 3339, ISO 8601, W3CDTF
    ("2003-06-10T04:00:00Z", "2003-06-10T04:00:00Z"),
    ("2003-06-10T04:00:00+02:00", "2003-06-10T02:00:00Z"),
    ("2003-06-10T04:00:00-0230", "2003-06-10T06:30:00Z"),
    ("2003-06-10T04:00:00.123Z", "2003-06-10T04:00:00.123Z"),
    ("2003-06-10T04:00:00,5Z", "2003-06-10T04:00:00.500Z"),  // comma decimal
    ("2003-06-10T04:00Z", "2003-06-10T04:00:00Z"),  // W3CDTF without seconds
    ("2003-06-10T04:00:00", "2003-06-10T04:00:00Z"),  // no zone: UTC
    ("2003-06-10 04:00:00 +0100", "2003-06-10T03:00:00Z"),  // space instead of T
    ("2003-06-10", "2003-06-10T00:00:00Z"),  // date only
    ("2003-06", "2003-06-01T00:00:00Z"),
    ("2003", "2003-01-01T00:00:00Z"),
    ("20030610T040000Z", "2003-06-10T04:00:00Z"),  // basic format
    ("20030610", "2003-06-10T00:00:00Z"),
    ("  2003-06-10T04:00:00Z \n", "2003-06-10T04:00:00Z"),
    // asctime and Unix date
    ("Tue Jun 10 04:00:00 2003", "2003-06-10T04:00:00Z"),
    ("Tue Jun  3 04:00:00 2003", "2003-06-03T04:00:00Z"),
    ("Tue Jun 10 04:00:00 GMT 2003", "2003-06-10T04:00:00Z"),
]

let notDates = ["", "yesterday", "2003-13-01", "2003-02-30", "Tue, 32 Jun 2003 04:00:00 GMT", "N/A", "25:00", "0000-00-00 00:00:00"]

@Suite("Dates")
struct DateTests {
    @Test("parses the forms feeds use", arguments: dateCases)
    func parses(text: String, expected: String) {
        #expect(FeedDate.parse(text).map(FeedDate.rfc3339) == expected)
    }

    @Test("rejects what is not a date", arguments: notDates)
    func rejects(text: String) {
        #expect(FeedDate.parse(text) == nil)
    }

    @Test func formatsRFC3339InUTC() {
        #expect(FeedDate.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(FeedDate.rfc3339(Date(timeIntervalSince1970: 1_700_000_000.25)) == "2023-11-14T22:13:20.250Z")
        #expect(FeedDate.rfc3339(Date(timeIntervalSince1970: -86_400)) == "1969-12-31T00:00:00Z")
    }

    @Test func agreesWithFoundationOnARangeOfInstants() {
        // An independent check of the calendar arithmetic: Foundation's ISO 8601 formatter, off the hot path.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let seconds = Double(Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator))
            let date = Date(timeIntervalSince1970: seconds)
            let text = formatter.string(from: date)
            #expect(FeedDate.parse(text) == date, "\(text)")
            #expect(FeedDate.rfc3339(date) == text)
        }
    }

    @Test func readsRFC822AsFoundationWritesItInEveryZoneAndLayout() {
        // The RFC 822 fast path and the loose reader must agree with an independent writer: Foundation's
        // DateFormatter, in numeric zones and GMT, with and without weekday and seconds, one- and two-digit days.
        var generator = SystemRandomNumberGenerator()
        let layouts = ["EEE, dd MMM yyyy HH:mm:ss Z", "EEE, d MMM yyyy HH:mm:ss Z", "dd MMM yyyy HH:mm:ss Z",
                       "EEE, dd MMM yyyy HH:mm Z", "EEE, dd MMM yyyy HH:mm:ss 'GMT'", "d MMM yyyy HH:mm 'UT'"]
        for _ in 0..<600 {
            let seconds = Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator)
            let zoneMinutes = [0, 60, -300, 330, 545, -570, 840, -720].randomElement(using: &generator)!
            let layout = layouts.randomElement(using: &generator)!
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = layout
            formatter.timeZone = layout.contains("'") ? TimeZone(secondsFromGMT: 0) : TimeZone(secondsFromGMT: zoneMinutes * 60)
            var date = Date(timeIntervalSince1970: Double(seconds))
            if !layout.contains("ss") { date = Date(timeIntervalSince1970: Double(seconds - ((seconds % 60) + 60) % 60)) }
            let text = formatter.string(from: date)
            #expect(FeedDate.parse(text) == date, "\(text)")
        }
    }
}
