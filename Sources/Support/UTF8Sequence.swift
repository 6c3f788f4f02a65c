// The one check of a UTF-8 sequence: RFC 3629's well-formed sequences (the Unicode Standard's table 3-7).

/// What the bytes at a position hold, read as UTF-8.
public enum UTF8Sequence: Sendable, Hashable {
    /// A well-formed sequence of this many bytes.
    case valid(Int)
    /// The start of a well-formed sequence whose last bytes are not there yet.
    case incomplete
    /// Not well-formed UTF-8.
    case invalid

    /// Checks the sequence whose lead byte (0x80 or above) is `base[index]`, with `count` bytes from `base` available.
    @inlinable
    public static func check(at index: Int, in base: UnsafePointer<UInt8>, count: Int) -> UTF8Sequence {
        let lead = base[index]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the range of the second byte
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return .invalid
        }
        for offset in 1..<length {
            guard index + offset < count else { return .incomplete }
            let byte = base[index + offset]
            if offset == 1 ? (byte < low || byte > high) : (byte < 0x80 || byte > 0xBF) { return .invalid }
        }
        return .valid(length)
    }
}
