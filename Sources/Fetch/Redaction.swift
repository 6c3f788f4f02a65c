// URLs as they may be shown: libcurl's URL parser finds the password to mask (the plain reading is Support's).
import Support

/// The display form of a URL that libcurl can parse: its parser finds the password.
extension Redaction {
    /// `url` with the password of its user information replaced by ``mask``; any other string unchanged.
    ///
    /// libcurl's URL parser, the one a fetch uses, decides where the password is; the rest of the text is kept as
    /// written (no normalisation). A string libcurl refuses is masked by a plain reading of the authority (the text
    /// between `://` and the first `/`, `?` or `#`: everything between the first `:` and the last `@`), so a password
    /// is hidden even in a URL that could not be fetched. File paths and text without `://` come back unchanged.
    public static func redactedURL(_ url: String) -> String {
        // Fast path: no user information without an `@`.
        guard url.utf8.contains(UInt8(ascii: "@")), url.contains("://") else { return url }
        switch CurlURL.password(of: url) {
        case .none:
            return url
        case .password(let password):
            if let range = passwordRange(in: url, password: password) {
                return url.replacingCharacters(in: range, with: mask)
            }
            return CurlURL.replacingPassword(of: url, with: mask) ?? redactedText(url)
        case .unparsed:
            return redactedText(url)
        }
    }

    /// The range of `password` as written in `url`'s authority (`:password@` after `://`), if it is there.
    private static func passwordRange(in url: String, password: String) -> Range<String.Index>? {
        guard let scheme = url.range(of: "://"),
              let match = url.range(of: ":" + password + "@", range: scheme.upperBound..<url.endIndex) else { return nil }
        return url.index(after: match.lowerBound)..<url.index(before: match.upperBound)
    }
}
