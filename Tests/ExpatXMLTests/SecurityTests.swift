import ExpatXML
import Foundation
import Testing

/// Counts what a hostile document makes the parser deliver, without keeping it.
final class VolumeCounter: XMLEventHandler {
    var textBytes = 0
    var elements = 0
    var sawSecret = false
    let secret: [UInt8]
    init(secret: String = "TOPSECRET") { self.secret = Array(secret.utf8) }
    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        elements += 1
        for attribute in attributes where contains(attribute.value) { sawSecret = true }
    }
    func text(_ text: XMLBytes) {
        textBytes += text.count
        if contains(text) { sawSecret = true }
    }
    private func contains(_ bytes: XMLBytes) -> Bool {
        guard bytes.count >= secret.count else { return false }
        return String(decoding: bytes.buffer, as: UTF8.self).contains(String(decoding: secret, as: UTF8.self))
    }
}

/// A temporary directory holding files a hostile document tries to reach.
struct SecretFiles {
    let directory: URL
    let secretFile: URL
    let secretDTD: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("feedingest-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        secretFile = directory.appendingPathComponent("secret.txt")
        try Data("TOPSECRET file contents".utf8).write(to: secretFile)
        secretDTD = directory.appendingPathComponent("secret.dtd")
        try Data("<!ENTITY leak \"TOPSECRET from the DTD\">".utf8).write(to: secretDTD)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

func run(_ xml: String, configuration: ExpatXMLConfiguration = .init(), handler: VolumeCounter = VolumeCounter())
    -> (handler: VolumeCounter, parser: XMLPushParser, error: ExpatXMLError?)
{
    let parser = XMLPushParser(handler: handler, configuration: configuration)
    do {
        try parser.parse(data: Data(xml.utf8))
        return (handler, parser, nil)
    } catch {
        return (handler, parser, error)
    }
}

/// The classic billion-laughs document: ten levels of ten references, 10^9 "lol"s if expanded.
let billionLaughs = """
    <?xml version="1.0"?>
    <!DOCTYPE lolz [
      <!ENTITY lol "lol">
      <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
      <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
      <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
      <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
      <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
      <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
      <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
      <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
      <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
    ]>
    <lolz>&lol9;</lolz>
    """

/// A quadratic blowup: one 50,000-character entity referenced 50,000 times, 2.5 GB if expanded.
/// `perElement` puts each reference in its own element, so no single text node limit can catch it.
func quadraticBlowup(perElement: Bool) -> String {
    let entity = String(repeating: "a", count: 50_000)
    let reference = perElement ? "<x>&a;</x>" : "&a;"
    return "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY a \"\(entity)\">]><r>"
        + String(repeating: reference, count: 50_000) + "</r>"
}

/// Peak resident memory of this process so far, in bytes.
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

@Suite("Security")
struct SecurityTests {
    @Test func externalGeneralEntityIsNeverLoaded() throws {
        let files = try SecretFiles()
        defer { files.remove() }
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"\(files.secretFile.absoluteString)\">]><r>before &x; after</r>"
        let result = run(xml)
        #expect(result.error == nil)
        #expect(result.handler.sawSecret == false)
        #expect(result.handler.textBytes == "before  after".utf8.count)
        #expect(result.parser.refusedExternalEntities == 1)
    }

    @Test func externalEntityByRelativePathIsNeverLoaded() throws {
        let files = try SecretFiles()
        defer { files.remove() }
        let xml = "<!DOCTYPE r [<!ENTITY x SYSTEM \"secret.txt\">]><r>&x;</r>"
        let handler = VolumeCounter()
        let parser = XMLPushParser(handler: handler, source: files.directory.appendingPathComponent("feed.xml").path)
        try parser.parse(data: Data(xml.utf8))
        #expect(handler.sawSecret == false)
        #expect(parser.refusedExternalEntities == 1)
    }

    @Test func externalDTDIsNeverLoaded() throws {
        let files = try SecretFiles()
        defer { files.remove() }
        // Were the DTD read, &leak; would expand to the secret. Unread, expat skips the undeclared entity
        // (the document is not standalone), which is what the XML spec allows a non-validating parser.
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE r SYSTEM \"\(files.secretDTD.absoluteString)\"><r>&leak;</r>"
        let result = run(xml)
        #expect(result.error == nil)
        #expect(result.handler.sawSecret == false)
    }

    @Test func externalParameterEntityIsNeverLoaded() throws {
        let files = try SecretFiles()
        defer { files.remove() }
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY % p SYSTEM \"\(files.secretDTD.absoluteString)\"> %p;]><r>&leak;</r>"
        let result = run(xml)
        #expect(result.handler.sawSecret == false)
    }

    @Test func externalEntityInAttributeIsAnError() throws {
        let files = try SecretFiles()
        defer { files.remove() }
        let xml = "<!DOCTYPE r [<!ENTITY x SYSTEM \"\(files.secretFile.absoluteString)\">]><r a=\"&x;\"/>"
        let result = run(xml)
        #expect(result.error?.code == .attributeExternalEntityReference)
        #expect(result.handler.sawSecret == false)
    }

    @Test func billionLaughsFailsFastWithBoundedMemory() {
        let before = peakResidentBytes()
        let result = run(billionLaughs)
        #expect(result.error?.code == .amplificationLimitBreach)
        #expect(result.error?.line ?? 0 > 0)
        // Expansion stops soon after the 8 MiB activation threshold: nothing near the 3 GB it asks for.
        #expect(result.handler.textBytes < 16 << 20)
        #expect(peakResidentBytes() - before < 256 << 20)
    }

    @Test("quadratic blowup fails fast with bounded memory", arguments: [false, true])
    func quadraticBlowupFails(perElement: Bool) {
        let before = peakResidentBytes()
        let result = run(quadraticBlowup(perElement: perElement))
        // In one text node the node limit or the amplification limit stops it, whichever comes first;
        // spread over elements, only the amplification limit can.
        let expected: Set<ExpatXMLError.Code> = perElement ? [.amplificationLimitBreach] : [.amplificationLimitBreach, .textNodeTooLarge]
        #expect(result.error.map { expected.contains($0.code) } == true)
        #expect(result.handler.textBytes < 32 << 20)
        #expect(peakResidentBytes() - before < 256 << 20)
    }

    @Test func amplificationLimitsAreConfigurable() {
        // 200 references to a 100 KB entity: 20 MB of text from ~100 KB of input, an amplification near 200.
        let xml = "<!DOCTYPE r [<!ENTITY a \"\(String(repeating: "b", count: 100_000))\">]><r>"
            + String(repeating: "<x>&a;</x>", count: 200) + "</r>"
        #expect(run(xml).error?.code == .amplificationLimitBreach)

        var generous = ExpatXMLConfiguration()
        generous.maximumAmplification = 1_000
        let allowed = run(xml, configuration: generous)
        #expect(allowed.error == nil)
        #expect(allowed.handler.textBytes == 20_000_000)

        var strict = ExpatXMLConfiguration()
        strict.maximumAmplification = 1_000
        strict.amplificationActivationThreshold = 1 << 20
        strict.maximumAmplification = 5
        #expect(run(xml, configuration: strict).error?.code == .amplificationLimitBreach)
    }

    @Test func anAmplificationLimitLibexpatRefusesFailsTheParseNamingIt() {
        // libexpat refuses a factor below 1 or not a number (XML_SetBillionLaughsAttackProtectionMaximumAmplification
        // returns false): the parser must say so, not run with expat's default limit or none.
        for bad: Float in [0.5, 0, -3, .nan] {
            var configuration = ExpatXMLConfiguration()
            configuration.maximumAmplification = bad
            let result = EventRecorder.record(Array("<r>fine</r>".utf8), configuration: configuration)
            #expect(result.events.isEmpty, "nothing is parsed with a setting libexpat refused")
            #expect(result.error?.code == .setupFailed, "\(bad)")
            #expect(result.error?.message.contains("amplification limit \(bad)") == true, "\(result.error?.message ?? "")")
            #expect(result.error?.message.contains("maximumAmplification") == true)
        }
        var smallest = ExpatXMLConfiguration()
        smallest.maximumAmplification = 1
        #expect(EventRecorder.record(Array("<r>fine</r>".utf8), configuration: smallest).error == nil)
    }

    @Test func doctypeAloneIsNotRejected() {
        // ROME rejects DOCTYPEs; RSS 0.91 feeds carry one. An internal subset's entities expand normally.
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd" [
              <!ENTITY copy "©">
            ]>
            <rss version="0.91"><channel><title>A &copy; B</title></channel></rss>
            """
        let recorder = EventRecorder.record(Array(xml.utf8))
        #expect(recorder.error == nil)
        #expect(recorder.events.contains("text \"A © B\""))
    }
}
