import ExpatXML
import Foundation
import TestSupport
import Testing

/// One way to configure the parser; the property must hold for each.
struct ChunkingConfiguration: Sendable, CustomTestStringConvertible {
    let name: String
    let configuration: ExpatXMLConfiguration
    var testDescription: String { name }

    static let standard = ChunkingConfiguration(name: "default (namespaces, CDATA merged)", configuration: .init())
    static let separateCDATA: ChunkingConfiguration = {
        var configuration = ExpatXMLConfiguration()
        configuration.cdataHandling = .separate
        return .init(name: "CDATA separate", configuration: configuration)
    }()
    static let noNamespaces: ChunkingConfiguration = {
        var configuration = ExpatXMLConfiguration()
        configuration.processesNamespaces = false
        return .init(name: "no namespaces", configuration: configuration)
    }()
    static let noNamespacesSeparateCDATA: ChunkingConfiguration = {
        var configuration = noNamespaces.configuration
        configuration.cdataHandling = .separate
        return .init(name: "no namespaces, CDATA separate", configuration: configuration)
    }()
    static let repairing: ChunkingConfiguration = {
        var configuration = ExpatXMLConfiguration()
        configuration.repairsMalformedInput = true
        return .init(name: "repairs malformed input", configuration: configuration)
    }()

    static let all = [standard, separateCDATA, noNamespaces, noNamespacesSeparateCDATA, repairing]
}

/// The property of DESIGN.md ("Contracts", ExpatXML): the events for a document, and the error for a malformed
/// one, never depend on how its bytes were split into chunks.
@Suite struct ChunkingPropertyTests {
    /// Seeds for the random splits.
    static let seeds: [UInt64] = [1, 2, 0x5EED, 0xC0FF_EE00_D15E_A5E5]
    /// Byte-by-byte feeding only below this size, to keep the run short.
    static let byteByByteLimit = 20 * 1024

    /// A small document is fed byte by byte (every boundary once) and with two random splits (boundaries in
    /// combination, and empty chunks); a larger one with all the seeds.
    static func splits(forCount count: Int) -> [ChunkingSplit] {
        count < byteByByteLimit
            ? [.byteByByte] + seeds.prefix(2).map { .random(seed: $0) }
            : seeds.map { .random(seed: $0) }
    }

    /// Parses `bytes` whole and then in every split; returns one message per split whose outcome differs.
    static func violations(_ bytes: [UInt8], name: String, configuration: ChunkingConfiguration,
                           adjusted: ExpatXMLConfiguration? = nil) -> (reference: ChunkingOutcome, violations: [String]) {
        let effective = adjusted ?? configuration.configuration
        let reference = ChunkingOutcome.parse(bytes, split: .whole, configuration: effective)
        var violations: [String] = []
        for split in splits(forCount: bytes.count) {
            let outcome = ChunkingOutcome.parse(bytes, split: split, configuration: effective)
            if outcome != reference {
                violations.append("\(name) [\(configuration.name); \(split)]: \(reference.firstDifference(from: outcome))")
            }
        }
        return (reference, violations)
    }

    static let corpus = DifferentialCorpus.xmlFiles()

    @Test("Corpus files: events and errors do not depend on chunking", arguments: ChunkingConfiguration.all)
    func corpusFiles(configuration: ChunkingConfiguration) {
        let files = Self.corpus
        #expect(files.count > 500, "the corpus at \(DifferentialCorpus.root.path) is missing or incomplete")
        var wellFormed = 0
        var violations: [String] = []
        for file in files {
            let result = Self.violations(file.bytes, name: file.path, configuration: configuration)
            if result.reference.error == nil { wellFormed += 1 }
            violations += result.violations
        }
        // Most of the corpus is well-formed; if it were not, the property would be tested on errors alone.
        #expect(wellFormed > 500)
        #expect(violations.isEmpty, "\(violations.count) chunk-dependent outcomes:\n\(violations.prefix(20).joined(separator: "\n"))")
    }

    /// Corpus files cut short at a random point: the error (and the events before it) must not depend on the split.
    @Test("Truncated corpus files: the error does not depend on chunking")
    func truncatedCorpusFiles() {
        var generator = SplitMix64(seed: 0x7256)
        var violations: [String] = []
        var failures = 0
        let sample = Self.corpus.enumerated().filter { $0.offset % 10 == 0 }.map(\.element)
        #expect(sample.count > 50)
        for file in sample where file.bytes.count > 2 {
            let cut = 1 + generator.next(below: file.bytes.count - 1)
            let bytes = Array(file.bytes[..<cut])
            for configuration in ChunkingConfiguration.all {
                let result = Self.violations(bytes, name: "\(file.path) cut at \(cut)", configuration: configuration)
                if result.reference.error != nil { failures += 1 }
                violations += result.violations
            }
        }
        // A random cut almost always lands before the root element closes.
        #expect(failures > sample.count * 3)
        #expect(violations.isEmpty, "\(violations.count) chunk-dependent outcomes:\n\(violations.prefix(20).joined(separator: "\n"))")
    }

    @Test("Hand-written documents: events do not depend on chunking", arguments: ChunkingDocuments.wellFormed)
    func handWritten(document: ChunkingDocument) {
        #expect(!document.bytes.isEmpty, "Foundation could not encode the document")
        for configuration in ChunkingConfiguration.all {
            let result = Self.violations(document.bytes, name: document.name, configuration: configuration,
                                         adjusted: document.applied(to: configuration.configuration))
            #expect(result.reference.error == nil, "\(configuration.name): \(result.reference.error.map { "\($0)" } ?? "")")
            #expect(result.reference.events.first == "startDocument" && result.reference.events.last == "endDocument")
            #expect(result.violations.isEmpty, "\(result.violations.joined(separator: "\n"))")
        }
        // The decoded content is right, not only consistent.
        let events = ChunkingOutcome.parse(document.bytes, split: .whole, configuration: document.applied(to: .init())).events
        for expected in document.mustContain {
            #expect(events.contains(expected), "missing \(expected.prefix(200)) in \(document.name)")
        }
        // One text node per node: never two text events in a row.
        for (first, second) in zip(events, events.dropFirst()) {
            #expect(!(first.hasPrefix("text ") && second.hasPrefix("text ")), "\(document.name): adjacent text events")
        }
    }

    @Test("Malformed documents and limits: the error does not depend on chunking", arguments: ChunkingDocuments.malformed)
    func malformed(document: ChunkingDocument) {
        for configuration in ChunkingConfiguration.all {
            let effective = document.applied(to: configuration.configuration)
            let expected = document.expectedError(under: effective)
            let result = Self.violations(document.bytes, name: document.name, configuration: configuration, adjusted: effective)
            #expect(result.reference.error?.code == expected,
                    "\(configuration.name): \(result.reference.error.map { "\($0)" } ?? "no error")")
            if expected != nil {
                #expect((result.reference.error?.line ?? 0) > 0, "an error with no position")
            }
            if let knownIssue = document.knownIssueWhenRepairing, effective.repairsMalformedInput {
                // Fails until the bug is fixed; then withKnownIssue fails, and this marker must go.
                withKnownIssue(Comment(rawValue: knownIssue)) {
                    #expect(result.violations.isEmpty, "\(result.violations.joined(separator: "\n"))")
                }
            } else {
                #expect(result.violations.isEmpty, "\(result.violations.joined(separator: "\n"))")
            }
        }
    }

    @Test("CDATA handling: merged into text, or delivered on its own")
    func cdataModes() {
        let bytes = Array("<r>a<![CDATA[<b>]]>c<![CDATA[]]></r>".utf8)
        let merged = ChunkingOutcome.parse(bytes, split: .byteByByte, configuration: ChunkingConfiguration.standard.configuration)
        let separate = ChunkingOutcome.parse(bytes, split: .byteByByte, configuration: ChunkingConfiguration.separateCDATA.configuration)
        #expect(merged.events.filter { $0.hasPrefix("text ") || $0.hasPrefix("cdata ") } == [chunkingText("a<b>c")])
        #expect(separate.events.filter { $0.hasPrefix("text ") || $0.hasPrefix("cdata ") }
                == [chunkingText("a"), #"cdata "<b>""#, chunkingText("c"), #"cdata """#])
    }

    @Test("Namespace processing off: names as written, no prefix mappings")
    func namespacesOff() {
        let bytes = Array(#"<r xmlns:p="urn:p"><p:a p:x="1"/></r>"#.utf8)
        let plain = ChunkingOutcome.parse(bytes, split: .byteByByte, configuration: ChunkingConfiguration.noNamespaces.configuration)
        #expect(plain.error == nil)
        #expect(plain.events.contains(#"start {}p:a q=p:a @{}p:x="1""#))
        #expect(!plain.events.contains { $0.hasPrefix("map ") })
    }

    @Test("The splits are deterministic, varied, and cut where they say")
    func splitsAreSound() {
        // The reference splitmix64.c's first output for seed 0.
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        let count = 100_000
        let offsets = ChunkingSplit.random(seed: 1).offsets(count: count)
        #expect(offsets == ChunkingSplit.random(seed: 1).offsets(count: count))
        #expect(offsets != ChunkingSplit.random(seed: 2).offsets(count: count))
        #expect(offsets.allSatisfy { $0 > 0 && $0 < count })
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(zip(offsets, offsets.dropFirst()).contains { $0 == $1 }, "no empty chunk")
        #expect(zip(offsets, offsets.dropFirst()).contains { $1 - $0 == 1 }, "no one-byte chunk")
        #expect(zip(offsets, offsets.dropFirst()).contains { $1 - $0 > 1000 }, "no large chunk")
        #expect(ChunkingSplit.byteByByte.offsets(count: 5) == [1, 2, 3, 4])
        // The comparison itself can fail: different documents give different outcomes.
        let a = ChunkingOutcome.parse(Array("<r>a</r>".utf8), split: .whole, configuration: .init())
        let b = ChunkingOutcome.parse(Array("<r>b</r>".utf8), split: .whole, configuration: .init())
        let c = ChunkingOutcome.parse(Array("<r>b</s>".utf8), split: .whole, configuration: .init())
        #expect(a != b && b != c)
    }
}
