import ExpatXML
import Foundation

/// Records every byte-API event as a readable line, so whole event sequences can be compared.
final class EventRecorder: XMLEventHandler {
    var events: [String] = []

    func startDocument() { events.append("startDocument") }
    func endDocument() { events.append("endDocument") }
    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        var line = "start {\(name.namespaceURI.string)}\(name.localName.string) q=\(name.qualifiedName)"
        for attribute in attributes {
            line += " @{\(attribute.name.namespaceURI.string)}\(attribute.name.qualifiedName)=\(attribute.value.string.debugDescription)"
        }
        events.append(line)
    }
    func endElement(_ name: XMLName) { events.append("end {\(name.namespaceURI.string)}\(name.localName.string)") }
    func text(_ text: XMLBytes) { events.append("text \(text.string.debugDescription)") }
    func cdata(_ text: XMLBytes) { events.append("cdata \(text.string.debugDescription)") }
    func startPrefixMapping(prefix: XMLBytes, namespaceURI: XMLBytes) {
        events.append("map \(prefix.string)=\(namespaceURI.string)")
    }
    func endPrefixMapping(prefix: XMLBytes) { events.append("unmap \(prefix.string)") }
    func comment(_ text: XMLBytes) { events.append("comment \(text.string.debugDescription)") }
    func processingInstruction(target: XMLBytes, data: XMLBytes) { events.append("pi \(target.string) \(data.string.debugDescription)") }

    /// Parses `bytes` split at `splits` (offsets), returning the events and the error, if any.
    static func record(_ bytes: [UInt8], splits: [Int] = [], configuration: ExpatXMLConfiguration = .init())
        -> (events: [String], error: ExpatXMLError?)
    {
        let recorder = EventRecorder()
        let parser = XMLPushParser(handler: recorder, configuration: configuration)
        var start = 0
        do {
            for split in splits.sorted() + [bytes.count] where split >= start {
                try parser.parse(Array(bytes[start..<split]))
                start = split
            }
            try parser.finish()
            return (recorder.events, nil)
        } catch {
            return (recorder.events, error)
        }
    }
}
