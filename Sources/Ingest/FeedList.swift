import ExpatXML
import Fetch
import Foundation

/// One feed of a feed list: where to fetch it, its tags, and the line that listed it.
public struct FeedEntry: Sendable, Hashable {
    /// Where a feed lives.
    public enum Location: Sendable, Hashable {
        /// An `http` or `https` URL.
        case remote(URL)
        /// An absolute path of a local file (from a path or a `file://` URL).
        case local(String)
    }

    /// Where to fetch the feed.
    public var location: Location
    /// The feed's name as the store and the articles' `feed` field know it: the URL as written for a remote
    /// feed, the absolute path for a local one.
    public var source: String
    /// Tags, in order, without duplicates: the words after the location, or the enclosing OPML outlines.
    public var tags: [String]
    /// The line of the list that named the feed first (1-based).
    public var line: Int

    /// Creates an entry.
    public init(location: Location, source: String, tags: [String] = [], line: Int = 0) {
        self.location = location
        self.source = source
        self.tags = tags
        self.line = line
    }

    /// The key the store files the feed under: the URL, or the `file://` URL of the path.
    public var storeURL: String {
        switch location {
        case .remote(let url): return url.absoluteString
        case .local(let path): return URL(fileURLWithPath: path).absoluteString
        }
    }
}

/// A line of a feed list that names no feed it can fetch; it is skipped and the run exits 1.
public struct FeedListProblem: Sendable, Hashable, CustomStringConvertible {
    /// The line number (1-based).
    public var line: Int
    /// The offending text.
    public var text: String
    /// Why it was refused.
    public var message: String

    /// Creates a problem.
    public init(line: Int, text: String, message: String) {
        self.line = line
        self.text = text
        self.message = message
    }

    /// `line N: message: text`.
    public var description: String { "line \(line): \(message): \(text)" }
}

/// Why a feed list cannot be read as one.
public enum FeedListError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are a feed (`format` names which), not a list of feeds.
    case isAFeed(format: String)

    public var description: String {
        switch self {
        case .isAFeed(let format): return "it is \(format), not a feed list"
        }
    }
}

/// A parsed feed list: the feeds to fetch, in order and without duplicates, and the lines that were refused.
///
/// Plain lists have one feed a line: an `http`/`https` URL, a local path (relative paths are resolved against
/// the list's directory) or a `file://` URL, then optional tags separated by white space. Blank lines and
/// everything from a word starting with `#` are ignored. A word that starts with `scheme:` is read as a URL, so
/// a local file whose name has a colon before any slash must be written `./name`. A line with another scheme or
/// an unparseable URL is a ``FeedListProblem``. A feed listed twice is kept once (at its first line), with the
/// tags of both lines.
///
/// An OPML document (recognised by its content, whatever the file is called) is read too: every `outline` with
/// an `xmlUrl` is a feed, and the titles of the outlines around it are its tags.
public struct FeedList: Sendable, Hashable {
    /// The feeds, in list order, each once.
    public var entries: [FeedEntry] = []
    /// The refused lines, in list order.
    public var problems: [FeedListProblem] = []

    /// Creates an empty list.
    public init() {}

    /// Parses a list's bytes: OPML when they are an OPML document, else one feed a line.
    ///
    /// - Parameter baseDirectory: the directory relative paths are resolved against (the list's own directory;
    ///   `nil` for the current directory).
    public init(data: Data, baseDirectory: String? = nil) {
        let base = baseDirectory ?? FileManager.default.currentDirectoryPath
        if Self.looksLikeOPML(data) {
            self.init()
            readOPML(data, baseDirectory: base)
        } else {
            self.init(text: String(decoding: data, as: UTF8.self), baseDirectory: base)
        }
    }

    /// The store's subscriptions as a list: each feed at its stored URL (a local feed's `file://` URL) with its tags.
    public init(subscriptions: [(url: String, tags: [String])]) {
        self.init()
        for (index, subscription) in subscriptions.enumerated() {
            add(subscription.url, tags: subscription.tags, line: index + 1, baseDirectory: "/")
        }
    }

    /// Parses a plain list, one feed a line.
    public init(text: String, baseDirectory: String? = nil) {
        self.init()
        let base = baseDirectory ?? FileManager.default.currentDirectoryPath
        var number = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            number += 1
            var words: [Substring] = []
            for word in rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\u{FEFF}" }) {
                if word.hasPrefix("#") { break }
                words.append(word)
            }
            guard let first = words.first else { continue }
            add(String(first), tags: words.dropFirst().map(String.init), line: number, baseDirectory: base)
        }
    }

    /// Reads a list file, or standard input for `-`.
    ///
    /// - Throws: ``FeedListError/isAFeed(format:)`` when the bytes are a feed, not a list (each of its lines would be
    ///   taken for a feed's location); a Cocoa error when the file cannot be read.
    public static func load(path: String) throws -> FeedList {
        let data: Data
        var base: String?
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            let url = URL(fileURLWithPath: path)
            data = try Data(contentsOf: url)
            base = url.deletingLastPathComponent().path
        }
        if let format = feedFormat(of: data) { throw FeedListError.isAFeed(format: format) }
        return FeedList(data: data, baseDirectory: base)
    }

    /// Adds one feed as a list line would name it (a URL, a path relative to the current directory, or a `file:`
    /// URL) with its tags, or records why it cannot be fetched (line 1).
    public mutating func addLine(_ location: String, tags: [String]) {
        add(location, tags: tags, line: 1, baseDirectory: FileManager.default.currentDirectoryPath)
    }

    /// Resolves one location and adds it, or records why it cannot be fetched.
    mutating func add(_ text: String, tags: [String], line: Int, baseDirectory: String) {
        switch Self.resolve(text, baseDirectory: baseDirectory) {
        case .success(let entry):
            var entry = entry
            entry.line = line
            entry.tags = Self.unique(tags)
            if let index = entries.firstIndex(where: { $0.storeURL == entry.storeURL }) {
                entries[index].tags = Self.unique(entries[index].tags + entry.tags)
            } else {
                entries.append(entry)
            }
        case .failure(let problem):
            problems.append(FeedListProblem(line: line, text: text, message: problem.message))
        }
    }

    struct Refusal: Error { let message: String }

    /// Turns a location as written into an entry (with no tags and line 0).
    static func resolve(_ text: String, baseDirectory: String) -> Result<FeedEntry, Refusal> {
        if let scheme = scheme(of: text) {
            switch scheme.lowercased() {
            case "http", "https":
                // libcurl's own parser first: it is the one that will fetch the URL, and it is stricter.
                if let problem = FetchRequest.problem(with: text) {
                    return .failure(Refusal(message: "not a URL libcurl accepts: \(problem)"))
                }
                guard let url = URL(string: text), let host = url.host, !host.isEmpty else {
                    return .failure(Refusal(message: "not a valid URL"))
                }
                return .success(FeedEntry(location: .remote(url), source: text))
            case "file":
                guard let url = URL(string: text), url.isFileURL, !url.path.isEmpty,
                      url.host == nil || url.host == "" || url.host == "localhost" else {
                    return .failure(Refusal(message: "not a valid file URL"))
                }
                let path = url.standardizedFileURL.path
                return .success(FeedEntry(location: .local(path), source: path))
            default:
                return .failure(Refusal(message: "unknown scheme '\(scheme)' (use http, https, file or a path)"))
            }
        }
        var path = NSString(string: text).expandingTildeInPath
        if !path.hasPrefix("/") { path = baseDirectory + "/" + path }
        path = URL(fileURLWithPath: path).standardizedFileURL.path
        return .success(FeedEntry(location: .local(path), source: path))
    }

    /// The scheme of `text` when it starts like a URL (`letter (letter | digit | + | - | .)* :`).
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        return String(scheme)
    }

    static func unique(_ tags: [String]) -> [String] {
        var seen = Set<String>()
        return tags.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    // MARK: OPML

    /// Whether the bytes are an XML document whose root is `opml`.
    static func looksLikeOPML(_ data: Data) -> Bool {
        rootElement(of: data)?.lowercased() == "opml"
    }

    /// The name of an XML document's root element (with its prefix), found after the BOM, the declaration, comments,
    /// processing instructions and the doctype in the first 64 KiB; `nil` when the bytes do not start like XML.
    static func rootElement(of data: Data) -> String? {
        let head = Array(data.prefix(65_536))
        var index = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func skipSpace() { while index < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[index]) { index += 1 } }
        func skip(past terminator: [UInt8]) -> Bool {
            while index + terminator.count <= head.count {
                if head[index..<index + terminator.count].elementsEqual(terminator) {
                    index += terminator.count
                    return true
                }
                index += 1
            }
            return false
        }
        while true {
            skipSpace()
            guard index < head.count, head[index] == 0x3C else { return nil }  // <
            let rest = head[(index + 1)...]
            if rest.starts(with: Array("?".utf8)) {
                guard skip(past: Array("?>".utf8)) else { return nil }
            } else if rest.starts(with: Array("!--".utf8)) {
                guard skip(past: Array("-->".utf8)) else { return nil }
            } else if rest.starts(with: Array("!".utf8)) {
                // A doctype, with an internal subset in brackets or not.
                var depth = 0
                index += 1
                while index < head.count {
                    if head[index] == 0x5B { depth += 1 } else if head[index] == 0x5D { depth -= 1 } else if head[index] == 0x3E, depth <= 0 { break }
                    index += 1
                }
                guard index < head.count else { return nil }
                index += 1
            } else {
                let name = rest.prefix { !([0x20, 0x09, 0x0A, 0x0D, 0x3E, 0x2F] as [UInt8]).contains($0) }
                return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
            }
        }
    }

    /// The format of a feed, when the bytes are one rather than a list: an XML document whose root is `rss`, `feed` or
    /// `RDF` (RSS 1.0), or a JSON object (a JSON Feed); `nil` for a plain list or OPML.
    public static func feedFormat(of data: Data) -> String? {
        if let root = rootElement(of: data) {
            switch root.split(separator: ":").last?.lowercased() {
            case "rss": return "an RSS feed"
            case "feed": return "an Atom feed"
            case "rdf": return "an RSS 1.0 feed"
            default: return nil
            }
        }
        let start = data.prefix(4096).drop { [0xEF, 0xBB, 0xBF, 0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if start.first == 0x7B, String(decoding: data.prefix(65_536), as: UTF8.self).contains("\"items\"") { return "a JSON Feed" }
        return nil
    }

    mutating func readOPML(_ data: Data, baseDirectory: String) {
        let reader = OPMLReader()
        let parser = ExpatXMLParser(source: "feed list")
        parser.delegate = reader
        reader.parser = parser
        do {
            try parser.parse(data: data)
        } catch {
            problems.append(FeedListProblem(line: error.line, text: "", message: "OPML is not well-formed: \(error.message)"))
        }
        for outline in reader.outlines {
            add(outline.url, tags: outline.tags, line: outline.line, baseDirectory: baseDirectory)
        }
    }
}

/// Collects the feed outlines of an OPML document with the titles of their enclosing outlines.
private final class OPMLReader: ExpatXMLParserDelegate {
    struct Outline {
        var url: String
        var tags: [String]
        var line: Int
    }

    weak var parser: ExpatXMLParser?
    var outlines: [Outline] = []
    /// One entry per open `outline`: its title when it is a folder (no `xmlUrl`), else `nil`.
    private var stack: [String?] = []

    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        guard elementName == "outline" else { return }
        let title = (attributeDict["text"] ?? attributeDict["title"])?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let url = attributeDict["xmlUrl"] ?? attributeDict["xmlurl"] {
            outlines.append(Outline(url: url.trimmingCharacters(in: .whitespacesAndNewlines),
                                    tags: stack.compactMap { $0 }, line: parser.lineNumber))
            stack.append(nil)
        } else {
            stack.append(title.flatMap { $0.isEmpty ? nil : $0 })
        }
    }

    func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        if elementName == "outline", !stack.isEmpty { stack.removeLast() }
    }
}
