import ExpatXML
import Syndication
import Foundation
import TestSupport
#if canImport(FoundationXML)
import FoundationXML
#endif

// The realistic work every variant does on the same bytes: find each item (RSS `item`, Atom `entry`), copy its
// title, link, guid and date into a small struct of `String`s, and count items. Nothing is retained but the
// running tally (and the first and last items, for checking), so memory reflects the parser, not the workload.

/// The fields of one item, as `String`s.
struct ItemFields: Equatable {
    var title = "", link = "", guid = "", pubDate = ""
}

extension WorkTally {
    /// Counts one extracted item.
    mutating func add(_ item: ItemFields) {
        items += 1
        titleBytes += item.title.utf8.count
        linkBytes += item.link.utf8.count
        guidBytes += item.guid.utf8.count
        pubDateBytes += item.pubDate.utf8.count
    }
}

/// Which field the parser is inside.
enum Field {
    case none, title, link, guid, pubDate
}

/// Monotonic nanoseconds.
@inline(__always) func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// This thread's CPU time, in nanoseconds.
@inline(__always) func threadCPUNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Wall and CPU time from its creation.
struct Stopwatch {
    let wallStart = monotonicNanos()
    let cpuStart = threadCPUNanos()

    /// (wall seconds, CPU seconds) so far.
    func read() -> (wall: Double, cpu: Double) {
        let wall = monotonicNanos() - wallStart, cpu = threadCPUNanos() - cpuStart
        return (Double(wall) / 1e9, Double(cpu) / 1e9)
    }
}

let atomNamespace = "http://www.w3.org/2005/Atom"

/// What every handler records, whatever its API.
struct WorkRecord {
    var tally = WorkTally()
    var firstItemNanos: UInt64 = 0
    var parsedDates = 0
    var current = ItemFields()
    var firstItem: ItemFields?
    var lastItem: ItemFields?

    /// Tallies a complete article (the `syndication` variants): the first one's time, its title, link and identifier.
    @inline(__always) mutating func count(_ article: Article, since start: UInt64) {
        if firstItemNanos == 0 { firstItemNanos = monotonicNanos() - start }
        tally.items += 1
        tally.titleBytes += article.title?.utf8.count ?? 0
        tally.linkBytes += article.link?.utf8.count ?? 0
        tally.guidBytes += article.id.utf8.count
        if article.published != nil || article.updated != nil { parsedDates += 1 }
    }

    @inline(__always) mutating func finishItem() {
        tally.add(current)
        if firstItem == nil { firstItem = current }
        lastItem = current
    }
}

// MARK: ExpatXML byte API

/// The byte-API handler: compares names as bytes, decodes only the four wanted text nodes, and turns text
/// collection off everywhere else with `isCollectingText` (so descriptions and content are skipped uncopied).
final class ByteAPIHandler: XMLEventHandler {
    let format: FeedFormat
    let startNanos: UInt64
    unowned(unsafe) var parser: XMLPushParser?
    var record = WorkRecord()
    private var inItem = false
    private var field = Field.none

    init(format: FeedFormat, startNanos: UInt64) {
        self.format = format
        self.startNanos = startNanos
    }

    func startDocument() {
        parser?.isCollectingText = false
    }

    func startElement(_ name: XMLName, attributes: XMLAttributes) {
        if !inItem {
            if isItem(name) {
                inItem = true
                record.current = ItemFields()
                if record.firstItemNanos == 0 { record.firstItemNanos = monotonicNanos() &- startNanos }
            }
            return
        }
        let local = name.localName
        switch format {
        case .rss:
            guard name.namespaceURI.isEmpty else { return }
            if local.equals("title") { field = .title }
            else if local.equals("link") { field = .link }
            else if local.equals("guid") { field = .guid }
            else if local.equals("pubDate") { field = .pubDate }
            else { return }
        case .atom:
            guard name.namespaceURI.equals("http://www.w3.org/2005/Atom") else { return }
            if local.equals("title") { field = .title }
            else if local.equals("id") { field = .guid }
            else if local.equals("published") { field = .pubDate }
            else if local.equals("link") {
                let rel = attributes.value(localName: "rel")
                if record.current.link.isEmpty, rel == nil || rel!.equals("alternate"), let href = attributes.value(localName: "href") {
                    record.current.link = href.string
                }
                return
            } else { return }
        }
        parser?.isCollectingText = true
    }

    func text(_ text: XMLBytes) {
        switch field {
        case .none: break
        case .title: record.current.title.append(text.string)
        case .link: record.current.link.append(text.string)
        case .guid: record.current.guid.append(text.string)
        case .pubDate: record.current.pubDate.append(text.string)
        }
    }

    func endElement(_ name: XMLName) {
        if field != .none {
            field = .none
            parser?.isCollectingText = false
        } else if inItem && isItem(name) {
            inItem = false
            record.finishItem()
        }
    }

    @inline(__always) private func isItem(_ name: XMLName) -> Bool {
        format == .rss ? name.localName.equals("item") && name.namespaceURI.isEmpty
                       : name.localName.equals("entry") && name.namespaceURI.equals("http://www.w3.org/2005/Atom")
    }
}

// MARK: Delegates with String names (ExpatXML String API and Foundation)

/// The state machine both String delegates share: names and text arrive as `String`s.
struct StringWork {
    let format: FeedFormat
    let startNanos: UInt64
    var record = WorkRecord()
    private var inItem = false
    private var field = Field.none

    init(format: FeedFormat, startNanos: UInt64) {
        self.format = format
        self.startNanos = startNanos
    }

    @inline(__always) private func isItem(_ name: String, _ namespaceURI: String?) -> Bool {
        format == .rss ? name == "item" && (namespaceURI ?? "").isEmpty : name == "entry" && namespaceURI == atomNamespace
    }

    mutating func start(_ name: String, _ namespaceURI: String?, _ attributes: [String: String]) {
        if !inItem {
            if isItem(name, namespaceURI) {
                inItem = true
                record.current = ItemFields()
                if record.firstItemNanos == 0 { record.firstItemNanos = monotonicNanos() &- startNanos }
            }
            return
        }
        switch format {
        case .rss:
            guard (namespaceURI ?? "").isEmpty else { return }
            switch name {
            case "title": field = .title
            case "link": field = .link
            case "guid": field = .guid
            case "pubDate": field = .pubDate
            default: return
            }
        case .atom:
            guard namespaceURI == atomNamespace else { return }
            switch name {
            case "title": field = .title
            case "id": field = .guid
            case "published": field = .pubDate
            case "link":
                let rel = attributes["rel"]
                if record.current.link.isEmpty, rel == nil || rel == "alternate", let href = attributes["href"] {
                    record.current.link = href
                }
            default: return
            }
        }
    }

    /// Whether the text now arriving is one of the four fields (ExpatXML's String API reports only that text).
    var wantsText: Bool { field != .none }

    /// Text may come in fragments (Foundation) or whole (ExpatXML): append either way.
    @inline(__always) mutating func characters(_ string: String) {
        switch field {
        case .none: break
        case .title: record.current.title.append(string)
        case .link: record.current.link.append(string)
        case .guid: record.current.guid.append(string)
        case .pubDate: record.current.pubDate.append(string)
        }
    }

    mutating func end(_ name: String, _ namespaceURI: String?) {
        if field != .none {
            field = .none
        } else if inItem && isItem(name, namespaceURI) {
            inItem = false
            record.finishItem()
        }
    }
}

/// The ExpatXML String-API delegate. It asks for attributes only on Atom `link` (the API's documented opt-out,
/// `shouldProcessAttributes`), and for text only inside the four fields it keeps (`reportsCharacters`, switched in
/// `didStartElement` and `didEndElement`): descriptions and content never become `String`s. Not `selective`, it
/// takes every text node as a `String`, like a Foundation delegate must.
final class StringAPIDelegate: ExpatXMLParserDelegate {
    var work: StringWork
    let selective: Bool

    init(format: FeedFormat, startNanos: UInt64, selective: Bool = true) {
        work = StringWork(format: format, startNanos: startNanos)
        self.selective = selective
    }

    func shouldProcessAttributes(forElement elementName: String, namespaceURI: String?) -> Bool {
        work.format == .atom && elementName == "link"
    }

    func parser(_ parser: ExpatXMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        work.start(elementName, namespaceURI, attributeDict)
        if selective { parser.reportsCharacters = work.wantsText }
    }

    func parser(_ parser: ExpatXMLParser, foundCharacters string: String) {
        work.characters(string)
    }

    func parser(_ parser: ExpatXMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        work.end(elementName, namespaceURI)
        if selective { parser.reportsCharacters = false }
    }
}

/// The Foundation `XMLParserDelegate` doing the same work (with `shouldProcessNamespaces = true`).
final class FoundationDelegate: NSObject, XMLParserDelegate {
    var work: StringWork
    var reportedError: String?

    init(format: FeedFormat, startNanos: UInt64) {
        work = StringWork(format: format, startNanos: startNanos)
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String]) {
        work.start(elementName, namespaceURI, attributeDict)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        work.characters(string)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        work.end(elementName, namespaceURI)
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if reportedError == nil { reportedError = String(describing: parseError) }
    }
}
