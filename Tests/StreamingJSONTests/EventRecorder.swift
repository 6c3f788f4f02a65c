import StreamingJSON

/// Records every event as a line of text, so two parses can be compared event for event.
final class EventRecorder: JSONEventHandler {
    var events: [String] = []
    var ended = false

    func startObject() { events.append("{") }
    func key(_ key: JSONBytes) { events.append("key " + key.string) }
    func endObject() { events.append("}") }
    func startArray() { events.append("[") }
    func endArray() { events.append("]") }
    func string(_ value: JSONBytes) { events.append("string " + value.string) }
    func number(_ text: JSONBytes) { events.append("number " + text.string) }
    func boolean(_ value: Bool) { events.append("bool \(value)") }
    func null() { events.append("null") }
    func endDocument() { ended = true }
}

/// The events of `bytes` parsed in pieces of `chunk` bytes (or along `splits`), and the error, if any.
func record(_ bytes: [UInt8], chunk: Int = 1 << 30, configuration: JSONConfiguration = .init())
    -> (events: [String], error: JSONError?, ended: Bool) {
    var splits: [Int] = []
    var offset = chunk
    while offset < bytes.count { splits.append(offset); offset += chunk }
    return record(bytes, splits: splits, configuration: configuration)
}

func record(_ bytes: [UInt8], splits: [Int], configuration: JSONConfiguration = .init()) -> (events: [String], error: JSONError?, ended: Bool) {
    let recorder = EventRecorder()
    let parser = JSONPushParser(handler: recorder, configuration: configuration, source: "test.json")
    var start = 0
    do {
        for split in splits + [bytes.count] where split >= start {
            try parser.parse(Array(bytes[start..<split]))
            start = split
        }
        try parser.finish()
    } catch {
        return (recorder.events, error, recorder.ended)
    }
    return (recorder.events, nil, recorder.ended)
}
