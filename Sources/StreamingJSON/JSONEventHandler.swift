// The events a JSON document makes, and the borrowed byte views they carry.

import Foundation

/// A borrowed view of bytes inside the parser (a string, a key, a number's text), valid only during the callback that
/// hands it out.
///
/// Copy what you need (``string``, `Array(buffer)`) before the callback returns; never store the view. Strings arrive
/// unescaped (`\n`, `\"` and `\u00e9` are already the characters they stand for).
public struct JSONBytes {
    /// The bytes: UTF-8, unless the parser was told not to check (``JSONConfiguration/validatesUTF8``).
    public let buffer: UnsafeBufferPointer<UInt8>

    /// Wraps a buffer.
    @inlinable public init(_ buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    /// The number of bytes.
    @inlinable public var count: Int { buffer.count }

    /// Whether there are no bytes.
    @inlinable public var isEmpty: Bool { buffer.isEmpty }

    /// The bytes as a `String`; sequences that are not UTF-8 become U+FFFD (possible only without
    /// ``JSONConfiguration/validatesUTF8``).
    @inlinable public var string: String { String(decoding: buffer, as: UTF8.self) }

    /// The bytes as a `String`, or `nil` when they are not UTF-8.
    ///
    /// ``string`` (the standard library's fast decoding), then a `memcmp` of its bytes with the input: decoding replaced
    /// nothing exactly when it gave the same bytes back. About twice as fast as the generic `String(validating:as:)`.
    @inlinable public var validatedString: String? {
        var decoded = string
        let unchanged = decoded.withUTF8 { utf8 in
            utf8.count == buffer.count && (buffer.isEmpty || memcmp(utf8.baseAddress!, buffer.baseAddress!, buffer.count) == 0)
        }
        return unchanged ? decoded : nil
    }

    /// Whether the bytes equal an ASCII or UTF-8 literal, without creating a `String`.
    @inlinable public func equals(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { other in
            other.count == buffer.count && (buffer.isEmpty || memcmp(other.baseAddress!, buffer.baseAddress!, buffer.count) == 0)
        }
    }

    /// Whether the bytes start with an ASCII or UTF-8 literal.
    @inlinable public func hasPrefix(_ literal: StaticString) -> Bool {
        literal.withUTF8Buffer { other in
            other.count <= buffer.count && (other.isEmpty || memcmp(other.baseAddress!, buffer.baseAddress!, other.count) == 0)
        }
    }

    /// A number's text as a 64-bit integer, when it is one (`42`, `-7`; not `4.2`, `1e3` or out of range).
    public var int64: Int64? {
        guard !buffer.isEmpty, buffer.count <= 20 else { return nil }
        var value: Int64 = 0
        var index = 0
        let negative = buffer[0] == 0x2D
        if negative { index = 1 }
        guard index < buffer.count else { return nil }
        while index < buffer.count {
            let digit = buffer[index] &- 0x30
            guard digit < 10 else { return nil }
            let (scaled, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = negative ? scaled.subtractingReportingOverflow(Int64(digit)) : scaled.addingReportingOverflow(Int64(digit))
            guard !overflow && !overflowAgain else { return nil }
            value = sum
            index += 1
        }
        return value
    }

    /// A number's text as a `Double` (`nil` for text that is not a number; infinity for one beyond `Double`'s range).
    public var double: Double? { Double(string) }
}

@available(*, unavailable, message: "a view into parser memory; copy it with .string or Array(.buffer)")
extension JSONBytes: Sendable {}

/// Receives a JSON document's events from a ``JSONPushParser``, in document order, synchronously inside its `parse` and
/// `finish` calls.
///
/// The events mirror the grammar (RFC 8259): an object is ``startObject()``, then for each member a ``key(_:)`` and
/// its value's events, then ``endObject()``; an array is ``startArray()``, its values, ``endArray()``. Strings, keys
/// and numbers arrive whole, however the input was split. Numbers arrive as the text written (`12`, `-0.5e3`), so an
/// identifier written as a number keeps every digit. Nothing is decoded into a `String` unless the handler asks.
///
/// To stop the parse from inside a callback, call ``JSONPushParser/abortParsing()``: no further event is delivered and
/// the `parse` call in progress throws. Every method has an empty default, so a handler implements what it needs.
public protocol JSONEventHandler: AnyObject {
    /// `{`: an object begins.
    func startObject()
    /// A member's name; its value's events follow.
    func key(_ key: JSONBytes)
    /// `}`: the innermost object ends.
    func endObject()
    /// `[`: an array begins.
    func startArray()
    /// `]`: the innermost array ends.
    func endArray()
    /// A string value, unescaped.
    func string(_ value: JSONBytes)
    /// A number value, as written (see ``JSONBytes/int64`` and ``JSONBytes/double``).
    func number(_ text: JSONBytes)
    /// `true` or `false`.
    func boolean(_ value: Bool)
    /// `null`.
    func null()
    /// The document ended well-formed (inside ``JSONPushParser/finish()``).
    func endDocument()
}

/// Empty defaults: a handler implements only the events it needs.
extension JSONEventHandler {
    /// Ignores the start of an object.
    public func startObject() {}
    /// Ignores a key.
    public func key(_ key: JSONBytes) {}
    /// Ignores the end of an object.
    public func endObject() {}
    /// Ignores the start of an array.
    public func startArray() {}
    /// Ignores the end of an array.
    public func endArray() {}
    /// Ignores a string.
    public func string(_ value: JSONBytes) {}
    /// Ignores a number.
    public func number(_ text: JSONBytes) {}
    /// Ignores a boolean.
    public func boolean(_ value: Bool) {}
    /// Ignores `null`.
    public func null() {}
    /// Ignores the end of the document.
    public func endDocument() {}
}
