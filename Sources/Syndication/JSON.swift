// The article line and the reports as JSON: a small byte-buffer writer and the model's encodings.

import CByteScan
import ExpatXML
import Foundation

/// A small, fast JSON writer into a byte buffer: objects, arrays, strings, numbers, booleans.
///
/// It writes what it is told in order and escapes strings (RFC 8259); it does not check that the
/// calls form a valid document. Keys of one object are separated automatically.
///
/// The bytes live in one growable allocation written through a pointer: each call checks the room it needs once,
/// instead of an `Array` append's uniqueness and capacity checks per byte (issue 18: the article line's writer was
/// ~15% of `feedingest parse`). It is a value: a copy shares the allocation until either side writes.
public struct JSONWriter: @unchecked Sendable {
    /// Owns the allocation; a writer is the only owner unless it was copied (then the first write copies it).
    private final class Allocation {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: capacity)
        }
        deinit { base.deallocate() }
    }

    private var allocation: Allocation
    /// `allocation.base`, kept here so a write is a store through a register, not a load through the object.
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// How many bytes are written.
    public private(set) var count = 0
    /// Bit `k` set: the object or array open at nesting level `k` (0 is the top) needs a comma before its next
    /// member. Levels past 63, which no document of this project reaches, keep theirs in `deepCommas`. A bit stack
    /// instead of an array of flags: no uniqueness or bounds check per key (issue 18: ~1% of `feedingest parse`).
    private var commas: UInt64 = 0
    private var level = 0
    private var deepCommas: [Bool] = []
    private var pendingKey = false

    /// Creates an empty writer.
    public init() {
        allocation = Allocation(capacity: 4096)
        base = allocation.base
        capacity = allocation.capacity
    }

    /// The bytes written so far, copied into an array (``withBytes(_:)`` lends them without a copy).
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Calls `body` with the bytes written so far, valid only during the call.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(allocation) { try body(UnsafeRawBufferPointer(start: base, count: count)) }
    }

    /// Removes everything written, keeping the buffer's capacity.
    public mutating func reset() {
        count = 0
        commas = 0
        level = 0
        deepCommas.removeAll()
        pendingKey = false
    }

    /// Room for `extra` more bytes, in an allocation of this writer's own: the pointer to write them at.
    @inline(__always)
    private mutating func reserve(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(count + extra > capacity || !isKnownUniquelyReferenced(&allocation)) { grow(count + extra) }
        return base + count
    }

    @inline(never)
    private mutating func grow(_ needed: Int) {
        let fresh = Allocation(capacity: max(needed, capacity * 2))
        fresh.base.update(from: base, count: count)
        allocation = fresh
        base = fresh.base
        capacity = fresh.capacity
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        count += 1
    }

    @inline(__always)
    private mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress else { return }
        reserve(buffer.count).update(from: source, count: buffer.count)
        count += buffer.count
    }

    /// Whether the current level needs a comma before its next member.
    private var needsComma: Bool {
        get { level < 64 ? commas & (1 << UInt64(level)) != 0 : deepCommas[level - 64] }
        set {
            if level < 64 {
                if newValue { commas |= 1 << UInt64(level) } else { commas &= ~(1 << UInt64(level)) }
            } else {
                deepCommas[level - 64] = newValue
            }
        }
    }

    private mutating func push() {
        level += 1
        if level >= 64 {
            if deepCommas.count < level - 63 { deepCommas.append(false) } else { deepCommas[level - 64] = false }
        } else {
            commas &= ~(1 << UInt64(level))
        }
    }

    private mutating func pop() {
        if level >= 64 { deepCommas.removeLast() }
        level -= 1
    }

    /// Writes the comma before a member when one is needed, and notes that the next one needs one.
    @inline(__always)
    private mutating func separate() {
        if level < 64 {
            let bit: UInt64 = 1 << UInt64(level)
            if commas & bit != 0 { append(0x2C) } else { commas |= bit }
        } else if needsComma {
            append(0x2C)
        } else {
            needsComma = true
        }
    }

    /// Opens an object, as a value.
    public mutating func beginObject() {
        beforeValue()
        append(0x7B)
        push()
    }

    /// Closes the innermost object.
    public mutating func endObject() {
        pop()
        append(0x7D)
    }

    /// Opens an array, as a value.
    public mutating func beginArray() {
        beforeValue()
        append(0x5B)
        push()
    }

    /// Closes the innermost array.
    public mutating func endArray() {
        pop()
        append(0x5D)
    }

    /// Writes an object key; the next call writes its value.
    public mutating func key(_ key: StaticString) {
        separate()
        let length = key.utf8CodeUnitCount
        let out = reserve(length + 3)
        out[0] = 0x22
        (out + 1).update(from: key.utf8Start, count: length)
        out[length + 1] = 0x22
        out[length + 2] = 0x3A
        count += length + 3
        pendingKey = true  // `separate()` marked this level: the member after this one needs its comma
    }

    /// Writes an object key given at run time.
    public mutating func key(_ key: String) {
        separate()
        appendEscaped(key)
        append(0x3A)
        pendingKey = true
    }

    @inline(__always)
    private mutating func beforeValue() {
        if pendingKey {
            pendingKey = false  // the key's `separate()` already marked the level
        } else {
            separate()
        }
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        beforeValue()
        appendEscaped(value)
    }

    /// Writes a string value given as UTF-8 bytes (escaped like ``string(_:)``; the bytes are not checked).
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        beforeValue()
        appendEscaped(utf8: value)
    }

    /// Writes an integer value.
    public mutating func number(_ value: Int64) {
        beforeValue()
        let out = reserve(21)
        count += Self.writeDecimal(value, to: out)
    }

    /// Writes the decimal digits of `value`, with a minus sign when negative, at `out` (room for 21 bytes); the count.
    static func writeDecimal(_ value: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var written = 0
        if value < 0 { out[0] = 0x2D; written = 1 }
        var magnitude = value.magnitude
        var digits = 1
        var scan = magnitude
        while scan >= 10 { scan /= 10; digits += 1 }
        var position = written + digits
        repeat {
            position -= 1
            out[position] = 0x30 + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        return written + digits
    }

    /// Writes a finite number with at most three decimals (`nan` and infinities as `null`).
    public mutating func number(_ value: Double) {
        beforeValue()
        guard value.isFinite else { return appendLiteral("null") }
        let rounded = (value * 1000).rounded() / 1000
        var text = rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int64(rounded)) : String(rounded)
        text.withUTF8 { append($0) }
    }

    /// Writes a boolean value.
    public mutating func bool(_ value: Bool) {
        beforeValue()
        appendLiteral(value ? "true" : "false")
    }

    /// Writes `null`.
    public mutating func null() {
        beforeValue()
        appendLiteral("null")
    }

    private mutating func appendLiteral(_ literal: StaticString) {
        append(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Writes `"key": "value"` when the value exists.
    public mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        self.key(key)
        string(value)
    }

    /// Writes `"key": number` when the value exists.
    public mutating func field(_ key: StaticString, _ value: Int?) {
        guard let value else { return }
        self.key(key)
        number(Int64(value))
    }

    /// Writes `"key": number` when the value exists.
    public mutating func field(_ key: StaticString, _ value: Double?) {
        guard let value else { return }
        self.key(key)
        number(value)
    }

    /// Writes `"key": "RFC 3339 date"` when the date exists.
    public mutating func field(_ key: StaticString, _ value: Date?) {
        guard let value else { return }
        self.key(key)
        beforeValue()
        let out = reserve(FeedDate.maximumRFC3339Length + 2)
        out[0] = 0x22
        let length = FeedDate.writeRFC3339(value, to: out + 1)  // digits, '-', ':', 'T', '.', 'Z': nothing to escape
        out[length + 1] = 0x22
        count += length + 2
    }

    /// Writes `"key": ["…", …]` when the list is not empty.
    public mutating func field(_ key: StaticString, _ values: [String]) {
        guard !values.isEmpty else { return }
        self.key(key)
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    /// Writes `"key": [{person}, …]` when the list is not empty.
    public mutating func field(_ key: StaticString, _ people: [Person]) {
        guard !people.isEmpty else { return }
        self.key(key)
        beginArray()
        for person in people { person.write(to: &self) }
        endArray()
    }

    /// Appends raw bytes, for example a newline between NDJSON lines.
    public mutating func raw(_ byte: UInt8) { append(byte) }

    private static let hex: StaticString = "0123456789abcdef"

    private mutating func appendEscaped(_ value: String) {
        // Native strings lend their bytes in place; a `var` copy for `withUTF8` was a retain and a release per value.
        if value.utf8.withContiguousStorageIfAvailable({ appendEscaped(utf8: $0) }) != nil { return }
        var copy = value
        copy.withUTF8 { appendEscaped(utf8: $0) }
    }

    /// Appends `utf8` as a JSON string: quoted, with `"`, `\` and the C0 controls escaped (RFC 8259, section 7), and
    /// everything else as it is. Runs that need no escape, found eight bytes at a time, are copied whole. Room for the
    /// worst case is reserved once when the value has anything to escape, so the loop writes without checks.
    private mutating func appendEscaped(utf8: UnsafeBufferPointer<UInt8>) {
        let length = utf8.count
        guard let source = utf8.baseAddress, length > 0 else {
            let out = reserve(2)
            out[0] = 0x22; out[1] = 0x22
            count += 2
            return
        }
        var index = Self.firstEscape(in: source, from: 0, count: length)
        if index == length {  // the common case: nothing to escape
            let out = reserve(length + 2)
            out[0] = 0x22
            (out + 1).update(from: source, count: length)
            out[length + 1] = 0x22
            count += length + 2
            return
        }
        let start = reserve(length * 6 + 2)  // each byte escapes to at most six (\u00XX)
        var out = start
        out.pointee = 0x22
        out += 1
        var runStart = 0
        while true {
            if index > runStart {
                out.update(from: source + runStart, count: index - runStart)
                out += index - runStart
            }
            guard index < length else { break }
            let byte = source[index]
            index += 1
            runStart = index
            out.pointee = 0x5C
            switch byte {
            case 0x22, 0x5C: out[1] = byte; out += 2
            case 0x0A: out[1] = 0x6E; out += 2
            case 0x0D: out[1] = 0x72; out += 2
            case 0x09: out[1] = 0x74; out += 2
            default:
                out[1] = 0x75; out[2] = 0x30; out[3] = 0x30
                Self.hex.withUTF8Buffer { hex in
                    out[4] = hex[Int(byte >> 4)]
                    out[5] = hex[Int(byte & 0xF)]
                }
                out += 6
            }
            index = Self.firstEscape(in: source, from: index, count: length)
        }
        out.pointee = 0x22
        out += 1
        count += out - start
    }

    /// The index of the first byte from `start` on that JSON must escape (`"`, `\`, below 0x20), or `count`: sixteen
    /// bytes at a time with SSE2 (`CByteScan`), else a byte at a time.
    @inline(__always)
    static func firstEscape(in base: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int {
        feedingest_bytescan_json_escape(base, start, count)
    }
}

extension Article {
    /// Writes the article as one JSON object, the contract documented by `Schemas/article.schema.json`.
    /// Absent fields and empty lists are left out. `extra` adds fields after `id` (for example `status`).
    public func write(to json: inout JSONWriter, extra: [(key: String, value: String)] = []) {
        json.beginObject()
        json.field("id", id)
        json.field("idSource", idSource.rawValue)
        for (key, value) in extra {
            json.key(key)
            json.string(value)
        }
        json.field("feed", feed)
        json.field("title", title)
        json.field("link", link)
        json.field("published", published)
        json.field("publishedRaw", publishedRaw)
        json.field("updated", updated)
        json.field("updatedRaw", updatedRaw)
        json.field("authors", authors)
        if let summary { json.key("summary"); summary.write(to: &json) }
        if let content { json.key("content"); content.write(to: &json) }
        json.field("categories", categories)
        if !enclosures.isEmpty {
            json.key("enclosures")
            json.beginArray()
            for enclosure in enclosures {
                json.beginObject()
                json.field("url", enclosure.url)
                json.field("type", enclosure.type)
                if let length = enclosure.length { json.key("length"); json.number(length) }
                json.field("title", enclosure.title)
                json.field("durationSeconds", enclosure.durationSeconds)
                json.endObject()
            }
            json.endArray()
        }
        json.field("image", image)
        json.field("comments", comments)
        json.field("commentsFeed", commentsFeed)
        json.field("commentCount", commentCount)
        json.field("language", language)
        if let podcast {
            json.key("podcast")
            json.beginObject()
            json.field("durationSeconds", podcast.durationSeconds)
            json.field("episode", podcast.episode)
            json.field("season", podcast.season)
            if let explicit = podcast.explicit { json.key("explicit"); json.bool(explicit) }
            json.field("keywords", podcast.keywords)
            json.field("guid", podcast.guid)
            if !podcast.transcripts.isEmpty {
                json.key("transcripts")
                json.beginArray()
                for transcript in podcast.transcripts {
                    json.beginObject()
                    json.field("url", transcript.url)
                    json.field("type", transcript.type)
                    json.field("language", transcript.language)
                    json.endObject()
                }
                json.endArray()
            }
            json.field("chapters", podcast.chaptersURL)
            json.endObject()
        }
        // JSON Feed (issue 15).
        json.field("externalURL", externalURL)
        json.field("contentText", contentText)
        json.field("bannerImage", bannerImage)
        // Issue 16: links, category details, out-of-line content, licence, rights, contributors.
        json.field("links", links)
        json.field("categoryDetails", categoryDetails)
        if let contentSource { json.key("contentSource"); contentSource.write(to: &json) }
        json.field("license", license)
        json.field("rights", rights)
        json.field("contributors", contributors)
        json.endObject()
    }
}

extension JSONWriter {
    /// Writes `"key": [{link}, …]` when the list is not empty.
    public mutating func field(_ key: StaticString, _ links: [Link]) {
        guard !links.isEmpty else { return }
        self.key(key)
        beginArray()
        for link in links { link.write(to: &self) }
        endArray()
    }

    /// Writes `"key": [{category}, …]` when the list is not empty.
    public mutating func field(_ key: StaticString, _ categories: [Category]) {
        guard !categories.isEmpty else { return }
        self.key(key)
        beginArray()
        for category in categories { category.write(to: &self) }
        endArray()
    }
}

extension Link {
    /// Writes `{"href":…,"rel":…,"type":…,"title":…,"hreflang":…,"length":…}` without absent fields.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("href", href)
        json.field("rel", rel)
        json.field("type", type)
        json.field("title", title)
        json.field("hreflang", hreflang)
        if let length { json.key("length"); json.number(length) }
        json.endObject()
    }
}

extension Category {
    /// Writes `{"term":…,"scheme":…,"label":…,"parent":…}` without absent fields.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("term", term)
        json.field("scheme", scheme)
        json.field("label", label)
        json.field("parent", parent)
        json.endObject()
    }
}

extension Person {
    /// Writes `{"name":…,"email":…,"uri":…}` without absent fields.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("name", name)
        json.field("email", email)
        json.field("uri", uri)
        json.field("avatar", avatar)
        json.endObject()
    }
}

extension TextContent {
    /// Writes `{"type":"html","value":…}`.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("type", type.rawValue)
        json.key("value")
        utf8.withUnsafeBufferPointer { json.string(utf8: $0) }
        json.endObject()
    }
}

extension FeedSummary {
    /// Writes the summary as one JSON object, the contract documented by `Schemas/report.schema.json`.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        writeFields(to: &json)
        if let error {
            json.key("error")
            error.write(to: &json)
        }
        json.endObject()
    }

    /// Writes the summary's fields but its error into the object `json` is writing, for a caller that reports an
    /// error of its own (one from reading the input rather than parsing it).
    public func writeFields(to json: inout JSONWriter) {
        json.field("source", source)
        if let format = metadata.format {
            json.key("format")
            json.beginObject()
            json.field("family", format.family.rawValue)
            json.field("version", format.version)
            json.field("dialect", format.dialect?.rawValue)
            json.endObject()
        }
        if let encoding {
            json.key("encoding")
            json.beginObject()
            json.field("name", encoding.name)
            json.field("source", encoding.source.rawValue)
            json.field("label", encoding.label)
            json.field("labelSource", encoding.labelSource?.rawValue)
            json.endObject()
        }
        json.key("feed")
        metadata.write(to: &json)
        json.key("articleCount")
        json.number(Int64(articleCount))
        json.key("repaired")
        json.bool(isRepaired)
        json.key("repairs")
        json.beginObject()
        for (kind, count) in repairCounts {
            json.key(kind)
            json.number(Int64(count))
        }
        json.endObject()
    }
}

extension FeedError {
    /// Writes `{"kind": "xml"|"json"|"notAFeed", "name": …, "code": …, "message": …, "line": …, …}` (the report's error).
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        switch kind {
        case .xml(let code):
            json.field("kind", "xml")
            json.field("name", code.name)
            json.key("code")
            json.number(Int64(code.rawValue))
        case .notAFeed:
            json.field("kind", "notAFeed")
            json.field("name", "not-a-feed")
        case .json(let code):
            json.field("kind", "json")
            json.field("name", code.name)
            json.key("code")
            json.number(Int64(code.rawValue))
        }
        json.field("message", message)
        if line > 0 {
            json.field("line", line)
            json.field("column", column)
        }
        if byteOffset >= 0 { json.key("byteOffset"); json.number(byteOffset) }
        json.endObject()
    }
}

extension FeedMetadata {
    /// Writes the metadata as one JSON object without absent fields.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("title", title)
        json.field("link", link)
        json.field("selfLink", selfLink)
        json.field("hubs", hubs)
        if let description { json.key("description"); description.write(to: &json) }
        json.field("language", language)
        json.field("updated", updated)
        json.field("updatedRaw", updatedRaw)
        json.field("image", image)
        json.field("icon", icon)
        json.field("generator", generator)
        json.field("rights", rights)
        json.field("authors", authors)
        json.field("categories", categories)
        json.field("ttl", ttl)
        json.field("updatePeriod", updatePeriod?.rawValue)
        json.field("updateFrequency", updateFrequency)
        if !skipHours.isEmpty {
            json.key("skipHours")
            json.beginArray()
            for hour in skipHours { json.number(Int64(hour)) }
            json.endArray()
        }
        json.field("skipDays", skipDays)
        // JSON Feed (issue 15).
        if let expired { json.key("expired"); json.bool(expired) }
        json.field("nextURL", nextURL)
        // Issue 16: identity, dates, people, image, generator, licence, links, category details, update base.
        json.field("id", id)
        json.field("published", published)
        json.field("publishedRaw", publishedRaw)
        if let imageDetails {
            json.key("imageDetails")
            json.beginObject()
            json.field("url", imageDetails.url)
            json.field("title", imageDetails.title)
            json.field("link", imageDetails.link)
            json.field("width", imageDetails.width)
            json.field("height", imageDetails.height)
            json.field("description", imageDetails.description)
            json.endObject()
        }
        if let publisher { json.key("publisher"); publisher.write(to: &json) }
        json.field("contributors", contributors)
        if let generatorDetails {
            json.key("generatorDetails")
            json.beginObject()
            json.field("name", generatorDetails.name)
            json.field("uri", generatorDetails.uri)
            json.field("version", generatorDetails.version)
            json.endObject()
        }
        json.field("license", license)
        json.field("links", links)
        json.field("categoryDetails", categoryDetails)
        json.field("updateBase", updateBase)
        json.endObject()
    }
}
