import Foundation

extension String {
    /// The text on one line: line breaks and tabs become spaces (a message quoting a server's multi-line error stays
    /// one line of stderr, a table cell one cell).
    var onOneLine: String {
        split(whereSeparator: { $0.isNewline || $0 == "\t" }).joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }
}
