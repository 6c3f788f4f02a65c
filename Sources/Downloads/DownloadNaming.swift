import Foundation

/// Names a downloaded file: a template under the download directory, filled with sanitised values.
///
/// The default template is `{feed}/{file}`: the feed's title as a folder, and the file name from the enclosure URL's
/// path, percent-decoded and without its query string (`/ep/42.mp3?token=x` gives `42.mp3`); a URL whose path names
/// no file falls back to `{title}.{ext}`. Placeholders:
///
/// - `{feed}`: the feed's title, else its host
/// - `{file}`: the name from the URL, as above
/// - `{title}`: the article's title (`untitled` without one)
/// - `{date}`: the article's date, `YYYY-MM-DD` in UTC (`undated` without one)
/// - `{ext}`: the URL's extension, else one for the media type (`audio/mpeg` gives `mp3`), else `bin`
///
/// Every value is made safe for any file system: `/`, `\`, control characters and `: * ? " < > |` become `_`, white
/// space runs become one space, leading dots (hidden files) and trailing dots and spaces go, and a name is cut to 180
/// bytes of UTF-8 keeping its extension. `/` in the template itself separates folders. Names are made unique by the
/// ``DownloadManager`` (` (2)` before the extension).
public struct DownloadNaming: Sendable, Hashable {
    /// The template. Default `{feed}/{file}`.
    public var template: String

    /// The placeholders a template may use.
    public static let placeholders = ["feed", "file", "title", "date", "ext"]

    /// A naming with `template`.
    public init(template: String = "{feed}/{file}") {
        self.template = template
    }

    /// Why `template` cannot be used, or `nil` when it can: an unknown or unclosed placeholder, an absolute path, a
    /// `..` folder, or no file name at the end.
    public static func problem(with template: String) -> String? {
        if template.hasPrefix("/") { return "the template is a path under the download directory, not an absolute one" }
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { return "'{' without '}' in the template" }
            let name = String(rest[rest.index(after: open)..<close])
            if !placeholders.contains(name) {
                return "unknown placeholder {\(name)} (known: \(placeholders.map { "{\($0)}" }.joined(separator: ", ")))"
            }
            rest = rest[rest.index(after: close)...]
        }
        let parts = template.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains(where: { $0 == ".." || $0 == "." }) { return "'.' and '..' are not allowed as folders in the template" }
        if parts.last.map({ $0.isEmpty }) ?? true { return "the template must end with a file name" }
        return nil
    }

    /// What one enclosure's name is made of.
    public struct Values: Sendable, Hashable {
        /// The enclosure's URL.
        public var url: String
        /// Its media type.
        public var mediaType: String?
        /// The feed's title.
        public var feedTitle: String?
        /// The feed's URL.
        public var feedURL: String?
        /// The article's title.
        public var title: String?
        /// The article's date.
        public var date: Date?

        /// Creates a value.
        public init(url: String, mediaType: String? = nil, feedTitle: String? = nil, feedURL: String? = nil, title: String? = nil,
                    date: Date? = nil) {
            self.url = url
            self.mediaType = mediaType
            self.feedTitle = feedTitle
            self.feedURL = feedURL
            self.title = title
            self.date = date
        }
    }

    /// The file's path relative to the download directory.
    public func relativePath(for values: Values) -> String {
        let urlName = Self.fileName(fromURL: values.url)
        let ext = urlName.flatMap(Self.pathExtension) ?? Self.fileExtension(forMediaType: values.mediaType) ?? "bin"
        let title = Self.sanitized(values.title ?? "").nonEmpty ?? "untitled"
        let feed = Self.sanitized(values.feedTitle ?? "").nonEmpty
            ?? Self.sanitized(values.feedURL.flatMap { URL(string: $0)?.host } ?? "").nonEmpty ?? "feed"
        let file = urlName.flatMap { Self.sanitized($0).nonEmpty } ?? Self.limited("\(title).\(ext)")
        let date = values.date.map(Self.day) ?? "undated"
        let filled: [String: String] = ["feed": feed, "file": file, "title": title, "date": date, "ext": ext]
        let parts = template.split(separator: "/", omittingEmptySubsequences: true).map { part -> String in
            var text = ""
            var rest = Substring(part)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                text += rest[..<open]
                text += filled[String(rest[rest.index(after: open)..<close])] ?? ""
                rest = rest[rest.index(after: close)...]
            }
            text += rest
            return Self.limited(Self.sanitized(text)).nonEmpty ?? "_"
        }
        return parts.joined(separator: "/")
    }

    /// `path` with ` (n)` before its extension: the n-th choice when the plain name is taken.
    public static func numbered(_ path: String, _ n: Int) -> String {
        guard n > 1 else { return path }
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return String(path[..<dot]) + " (\(n))" + String(path[dot...])
        }
        return path + " (\(n))"
    }

    // MARK: Pieces

    /// The last segment of the URL's path, percent-decoded, without query or fragment; `nil` when there is none.
    static func fileName(fromURL text: String) -> String? {
        guard let components = URLComponents(string: text) else { return nil }
        let path = components.percentEncodedPath
        guard let last = path.split(separator: "/").last else { return nil }
        let decoded = String(last).removingPercentEncoding ?? String(last)
        let trimmed = decoded.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty || trimmed == "." || trimmed == ".." ? nil : trimmed
    }

    /// A name's extension (1–8 letters and digits), lowercased.
    static func pathExtension(_ name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        guard (1...8).contains(ext.count), ext.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return ext.lowercased()
    }

    /// An extension for the common enclosure types.
    static func fileExtension(forMediaType type: String?) -> String? {
        guard let type = type?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else { return nil }
        let known = ["audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "audio/m4a": "m4a",
                     "audio/aac": "aac", "audio/ogg": "ogg", "audio/opus": "opus", "audio/flac": "flac", "audio/wav": "wav",
                     "audio/x-wav": "wav", "video/mp4": "mp4", "video/x-m4v": "m4v", "video/webm": "webm", "video/quicktime": "mov",
                     "video/mpeg": "mpg", "application/pdf": "pdf", "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif",
                     "application/epub+zip": "epub", "application/zip": "zip"]
        return known[type]
    }

    /// One name made safe for any file system (see the type's documentation); may be empty.
    static func sanitized(_ text: String) -> String {
        var out = ""
        var lastWasSpace = false
        for scalar in text.unicodeScalars {
            let character: Character
            switch scalar {
            case "/", "\\", ":", "*", "?", "\"", "<", ">", "|": character = "_"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value):
                character = " "
            case _ where scalar.properties.isWhitespace: character = " "
            default: character = Character(scalar)
            }
            if character == " " {
                if lastWasSpace { continue }
                lastWasSpace = true
            } else {
                lastWasSpace = false
            }
            out.append(character)
        }
        var result = Substring(out)
        while let first = result.first, first == "." || first == " " { result = result.dropFirst() }
        while let last = result.last, last == "." || last == " " { result = result.dropLast() }
        return String(result)
    }

    /// A name cut to 180 bytes of UTF-8 (at a character boundary), keeping its extension.
    static func limited(_ name: String, bytes: Int = 180) -> String {
        guard name.utf8.count > bytes else { return name }
        let ext = pathExtension(name).map { "." + $0 } ?? ""
        var stem = ext.isEmpty ? Substring(name) : name.dropLast(ext.count)
        while stem.utf8.count + ext.utf8.count > bytes, !stem.isEmpty { stem = stem.dropLast() }
        return sanitized(String(stem)) + ext
    }

    private static func day(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}

extension String {
    /// `nil` for the empty string.
    var nonEmpty: String? { isEmpty ? nil : self }
}
