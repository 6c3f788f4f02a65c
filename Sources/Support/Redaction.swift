// Passwords out of what is shown: the plain reading of a URL's user information, for every module.

/// URLs and messages as they may be shown: the password of a URL's user information replaced by `***`.
///
/// The project's rule is that passwords never appear in output. A feed or enclosure URL may carry credentials
/// (`https://user:secret@host/feed.xml`); the stored URL keeps them (a fetch needs them), and every place that prints
/// or writes a URL for people or reports shows it masked (`https://user:***@host/feed.xml`, the spelling PostgreSQL
/// store URIs are shown with). Fetch adds `redactedURL(_:)`, which lets libcurl's URL parser find the password; what
/// is here needs no parser: messages that may quote a URL (libcurl's error texts, the CLI's stderr lines) go through
/// ``redactedText(_:)``.
///
/// Only the user information's password is masked: the user name is kept (it tells feeds apart), and query
/// parameters (`?token=…`) are left as they are, since they are part of what the resource is called.
public enum Redaction {
    /// What a password is replaced with.
    public static let mask = "***"

    /// `text` with the password of every URL in it (`scheme://user:password@host`) replaced by ``mask``.
    ///
    /// For messages that may quote a URL: a URL's authority ends at `/`, `?`, `#`, white space, a quote or an angle
    /// bracket; within it, everything between the first `:` and the last `@` is the password.
    public static func redactedText(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "@")), text.contains("://") else { return text }
        var bytes = Array(text.utf8)
        var searchFrom = 0
        while let separator = find(Array("://".utf8), in: bytes, from: searchFrom) {
            let start = separator + 3
            var end = start
            while end < bytes.count, !endsAuthority(bytes[end]) { end += 1 }
            searchFrom = start
            guard let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")),
                  let colon = bytes[start..<at].firstIndex(of: UInt8(ascii: ":")) else { continue }
            let masked = Array(mask.utf8)
            bytes.replaceSubrange((colon + 1)..<at, with: masked)
            searchFrom = colon + 1 + masked.count + 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The password of the first URL's user information in `text` as written (`scheme://user:password@`), read as
    /// ``redactedText(_:)`` reads it; `nil` when there is none.
    public static func userInfoPassword(in text: String) -> String? {
        let bytes = Array(text.utf8)
        guard let separator = find(Array("://".utf8), in: bytes, from: 0) else { return nil }
        let start = separator + 3
        var end = start
        while end < bytes.count, !endsAuthority(bytes[end]) { end += 1 }
        guard let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")),
              let colon = bytes[start..<at].firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return String(decoding: bytes[(colon + 1)..<at], as: UTF8.self)
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: " "), UInt8(ascii: "\t"),
             UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"),
             UInt8(ascii: ">"), UInt8(ascii: "`"), UInt8(ascii: "\\"):
            return true
        default:
            return false
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard needle.count <= bytes.count else { return nil }
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
