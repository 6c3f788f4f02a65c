import CByteScan
import TestSupport
import Testing

/// The repair filter's wide scan (Sources/CByteScan, SSE2 or eight bytes a word) against a byte-at-a-time reference.
@Suite struct ByteScanTests {
    /// What `feedingest_bytescan_find` must return, one byte at a time, written in Swift apart from the C.
    static func reference(_ bytes: [UInt8], from start: Int, to end: Int, _ a: UInt8, _ b: UInt8, _ c: UInt8, high: Bool) -> Int {
        var index = start
        while index < end {
            let byte = bytes[index]
            if byte == a || byte == b || byte == c { return index }
            if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D { return index }
            if high && byte >= 0x80 { return index }
            index += 1
        }
        return end
    }

    static func find(_ bytes: [UInt8], from start: Int, to end: Int, _ a: UInt8, _ b: UInt8, _ c: UInt8, high: Bool) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            feedingest_bytescan_find(buffer.baseAddress!, start, end, a, b, c, high ? 1 : 0)
        }
    }

    /// The triples the filter uses (text, tag, attribute values, CDATA, comments, processing instructions).
    static let specials: [(UInt8, UInt8, UInt8)] = [(0x26, 0x3C, 0x3C), (0x22, 0x27, 0x3E), (0x22, 0x26, 0x22), (0x27, 0x26, 0x27),
                                                    (0x5D, 0x5D, 0x5D), (0x2D, 0x2D, 0x2D), (0x3F, 0x3F, 0x3F)]

    /// Random buffers (mostly plain bytes, so that stops land anywhere in and across 16-byte blocks), random ranges,
    /// every special triple, high bytes stopping or not: the same index as the reference.
    @Test(arguments: [false, true])
    func agreesWithTheByteAtATimeReference(high: Bool) {
        var random = SplitMix64(seed: high ? 0xB17E : 0x5CA7)
        for round in 0..<20_000 {
            let length = random.next(below: 80)
            // One in four rounds: any byte at all; otherwise rare stops in printable ASCII.
            let anyByte = round % 4 == 0
            let bytes: [UInt8] = (0..<length).map { _ in
                if anyByte { return UInt8(truncatingIfNeeded: random.next()) }
                switch random.next(below: 40) {
                case 0: return [0x26, 0x3C, 0x22, 0x27, 0x3E, 0x5D, 0x2D, 0x3F][random.next(below: 8)]
                case 1: return [0x09, 0x0A, 0x0D, 0x00, 0x01, 0x0B, 0x0C, 0x1F, 0x7F][random.next(below: 9)]
                case 2: return UInt8(0x80 + random.next(below: 128))
                default: return UInt8(0x20 + random.next(below: 0x5F))
                }
            }
            let start = length == 0 ? 0 : random.next(below: length + 1)
            let end = start + random.next(below: length - start + 1)
            let (a, b, c) = Self.specials[random.next(below: Self.specials.count)]
            let expected = Self.reference(bytes, from: start, to: end, a, b, c, high: high)
            let found = Self.find(bytes, from: start, to: end, a, b, c, high: high)
            #expect(found == expected, "\(bytes) \(start)..<\(end) \((a, b, c)) high \(high)")
            if found != expected { return }
        }
    }

    /// Each single byte value, alone at every position of a 40-byte run of `x`: found exactly where the reference says.
    @Test func everyByteValueAtEveryPosition() {
        for high in [false, true] {
            for value in 0...255 {
                for position in 0..<40 {
                    var bytes = [UInt8](repeating: 0x78, count: 40)
                    bytes[position] = UInt8(value)
                    for (a, b, c) in Self.specials {
                        let expected = Self.reference(bytes, from: 0, to: 40, a, b, c, high: high)
                        let found = Self.find(bytes, from: 0, to: 40, a, b, c, high: high)
                        #expect(found == expected, "byte \(value) at \(position), \((a, b, c)), high \(high)")
                        if found != expected { return }
                    }
                }
            }
        }
    }

    /// Tab, line feed and carriage return never stop the scan, and controls, specials and (when checked) high bytes do.
    @Test func whitespaceNeverStopsAndControlsDo() {
        let plain = [UInt8]("ab\tc\nd\re  fghijklmnopqrstuvwxyz0123456789".utf8)
        #expect(Self.find(plain, from: 0, to: plain.count, 0x26, 0x3C, 0x3C, high: true) == plain.count)
        for stop: UInt8 in [0x00, 0x01, 0x08, 0x0B, 0x0C, 0x0E, 0x1F, 0x26, 0x3C] {
            let bytes = plain + [stop] + plain
            #expect(Self.find(bytes, from: 0, to: bytes.count, 0x26, 0x3C, 0x3C, high: false) == plain.count, "\(stop)")
        }
        let accented = plain + [0xC3, 0xA9] + plain
        #expect(Self.find(accented, from: 0, to: accented.count, 0x26, 0x3C, 0x3C, high: true) == plain.count)
        #expect(Self.find(accented, from: 0, to: accented.count, 0x26, 0x3C, 0x3C, high: false) == accented.count)
    }

    /// The first byte above 0x7F (`feedingest_bytescan_high`, where the check of an encoding against its bytes begins)
    /// against a byte loop: random buffers and ranges, and each high byte alone at each place of a run.
    @Test func highByteScanAgreesWithTheByteAtATimeReference() {
        var random = SplitMix64(seed: 0x8080)
        for round in 0..<20_000 {
            let length = random.next(below: 200)
            let bytes: [UInt8] = (0..<length).map { _ in
                round % 4 == 0 || random.next(below: 150) == 0 ? UInt8(truncatingIfNeeded: random.next()) : UInt8(random.next(below: 0x80))
            }
            let start = length == 0 ? 0 : random.next(below: length + 1)
            let end = start + random.next(below: length - start + 1)
            var expected = start
            while expected < end, bytes[expected] < 0x80 { expected += 1 }
            let found = bytes.withUnsafeBufferPointer { feedingest_bytescan_high($0.baseAddress!, start, end) }
            #expect(found == expected, "\(bytes) \(start)..<\(end)")
            if found != expected { return }
        }
        // 150 bytes: the 64-byte blocks, the 16-byte steps and the byte loop each find it somewhere.
        for value in 0x80...0xFF {
            for position in 0..<150 {
                var bytes = [UInt8](repeating: 0x7F, count: 150)
                bytes[position] = UInt8(value)
                let found = bytes.withUnsafeBufferPointer { feedingest_bytescan_high($0.baseAddress!, 0, 150) }
                #expect(found == position, "byte \(value) at \(position)")
                if found != position { return }
            }
        }
    }

    /// The article line's escape scan (`feedingest_bytescan_json_escape`: `"`, `\\`, below 0x20) against a byte loop, on
    /// random buffers and ranges (short values take the eight-byte and byte paths, long ones the sixteen-byte one).
    @Test func jsonEscapeScanAgreesWithTheByteAtATimeReference() {
        var random = SplitMix64(seed: 0x1507)
        for round in 0..<20_000 {
            let length = random.next(below: 90)
            let anyByte = round % 4 == 0
            let bytes: [UInt8] = (0..<length).map { _ in
                if anyByte { return UInt8(truncatingIfNeeded: random.next()) }
                switch random.next(below: 50) {
                case 0: return [0x22, 0x5C, 0x00, 0x09, 0x0A, 0x0D, 0x1F][random.next(below: 7)]
                case 1: return UInt8(0x80 + random.next(below: 128))
                default: return UInt8(0x20 + random.next(below: 0x5F))
                }
            }
            let start = length == 0 ? 0 : random.next(below: length + 1)
            let end = start + random.next(below: length - start + 1)
            var expected = start
            while expected < end, bytes[expected] >= 0x20, bytes[expected] != 0x22, bytes[expected] != 0x5C { expected += 1 }
            let found = bytes.withUnsafeBufferPointer { feedingest_bytescan_json_escape($0.baseAddress!, start, end) }
            #expect(found == expected, "\(bytes) \(start)..<\(end)")
            if found != expected { return }
        }
    }

    /// The scan reads only `bytes[0..<count]`: values of exactly 16 to 40 bytes in allocations of exactly that size
    /// (what an address sanitizer run would catch an over-read in), every start, an escape at each place in turn.
    /// Every length up to 40 in an allocation of exactly that size, every start, an escape of each kind at each place
    /// followed by each byte a word test could falsely mark after it (a borrow: a space after a control, `#` after `"`,
    /// `]` after `\`): the 16- and 8-byte tails read the value's last bytes again, never past it, and a scan that starts
    /// just after an escape must not see a mark the escape's borrow left on the next byte.
    @Test func jsonEscapeScanStaysInsideAnExactlySizedValue() {
        for length in 1...40 {
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: length)
            defer { buffer.deallocate() }
            for (escapeByte, neighbour) in [(UInt8(0x22), UInt8(0x23)), (0x5C, 0x5D), (0x1F, 0x20), (0x00, 0x20), (0x0A, 0x61), (0x22, 0x22)] {
                for escape in [-1] + Array(0..<length) {
                    for index in 0..<length { buffer[index] = UInt8(0x61 + index % 26) }
                    if escape >= 0 {
                        buffer[escape] = escapeByte
                        if escape + 1 < length { buffer[escape + 1] = neighbour }
                    }
                    for start in 0...length {
                        var expected = length
                        for index in start..<length where buffer[index] < 0x20 || buffer[index] == 0x22 || buffer[index] == 0x5C {
                            expected = index
                            break
                        }
                        let found = feedingest_bytescan_json_escape(UnsafePointer(buffer.baseAddress!), start, length)
                        #expect(found == expected, "length \(length), \(escapeByte) at \(escape) then \(neighbour), from \(start)")
                        if found != expected { return }
                    }
                }
            }
        }
    }
}
