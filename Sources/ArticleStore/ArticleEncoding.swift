import CByteScan
import Foundation
import Syndication

/// The store's content hash and fallback key, as functions anyone can call.
///
/// **Content hash.** XXH64 (seed 0; https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md) over
/// the article's canonical encoding: for each field in this order — identifier, where it came from, title,
/// link, published (date), published (raw text), updated (date), updated (raw text), authors, summary, summary
/// type, content, content type, categories, enclosures, image, comments page, comments feed, language, podcast
/// details — a text field is its UTF-8 length as 4 little-endian bytes followed by the bytes (an absent one is
/// `FF FF FF FF`), a date is `01` and the seconds since 1970 as an 8-byte little-endian IEEE 754 double (absent:
/// `00`), and a list is its JSON column text (see the README; an empty list is absent). Then, only when the article has
/// any of the fields milestone 2 added (JSON Feed's external URL, text content and banner image; every link, the
/// category details, out-of-line content, licence, rights, contributors), a byte `FE` and the `details` column's JSON
/// text: an article without them encodes, and hashes, exactly as before they existed, so stores written earlier keep
/// their hashes and report nothing updated that did not change.
/// Two articles hash the same exactly when all these fields are the same. Left out: ``Article/feed`` (the
/// same for a whole feed) and ``Article/commentCount``, which changes without the article changing (the store
/// writes a new count without reporting an update).
///
/// XXH64 is fast (GB/s), the same on every machine and release, and 64 bits are plenty to tell two versions of
/// one article apart. It comes from libxxhash (``xxHash64(_:seed:)``, in `XXHash.swift`), bit for bit the
/// hand-written Swift version the store used before: `StoredHashTests` holds that version's results and a store it
/// wrote. Changing the encoding changes every hash: bump ``version`` and add a migration that recomputes stored
/// hashes, or every article would be reported updated once.
public enum ArticleHasher {
    /// The hash definition's version, stored in each database (`store_info.content_hash`).
    public static let version = "xxh64-v1"

    /// The content hash of an article.
    public static func contentHash(of article: Article) -> UInt64 {
        let row = ArticleRow()
        row.encode(article)
        return row.contentHash
    }

    /// The key of an article with neither a usable identifier nor a link: `hash:` and 16 hexadecimal digits of
    /// XXH64 over its title, publication date (or raw date text) and content (or summary), encoded as above.
    public static func fallbackKey(of article: Article) -> String {
        ArticleRow().fallbackKey(of: article)
    }
}

/// One article encoded for a row: every text and JSON column laid out once in a reusable buffer, hashed there,
/// and bound from there (`SQLITE_STATIC`), so the article's text is copied once before SQLite copies it into
/// its record — no `String` per JSON column, no `SQLITE_TRANSIENT` copy per field.
///
/// Owned by one ``StoreContext`` (not thread-safe, like it). The buffer must not change while a statement
/// bound from it runs: encode, bind, step, then encode the next article.
package final class ArticleRow {
    /// The text columns, in encoding order; the ones up to ``podcast`` are covered by the content hash.
    package enum Column: Int, CaseIterable {
        case identifier, idSource, title, link, publishedRaw, updatedRaw, authors, summary, summaryType, content,
             contentType, categories, enclosures, image, comments, commentsFeed, language, podcast, details
        case key, keySource
    }

    // The buffer and its writer are a struct in memory of the row's own, reached through a constant pointer: the
    // class's stored properties were checked for exclusive access at run time on every byte written and every column
    // read (a runtime call each, ~25 M instructions per 16,000 articles); and the JSON writers need no closures
    // (which copied the whole `Article` for each list column).
    private let storage: UnsafeMutablePointer<RowBuffer>
    private var buffer: RowBuffer { _read { yield storage.pointee } }

    package init() {
        storage = UnsafeMutablePointer.allocate(capacity: 1)
        storage.initialize(to: RowBuffer())
    }

    deinit {
        storage.pointee.deallocate()
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Encodes an article (and its key, which the hash does not cover).
    package func encode(_ article: borrowing Article, key: String = "", keySource: String = "") {
        storage.pointee.encode(article, key: key, keySource: keySource)
        let span = buffer.spans[Column.key.rawValue]
        storage.pointee.keyHash = Int64(bitPattern: ArticleHasher.xxHash64(
            UnsafeRawBufferPointer(start: buffer.base + span.offset, count: max(span.length, 0))))
    }

    /// The content hash of the encoded article (``ArticleHasher``).
    package var contentHash: UInt64 {
        ArticleHasher.xxHash64(UnsafeRawBufferPointer(start: buffer.base, count: buffer.hashedLength))
    }

    /// The hash of the encoded key (``keyHash(_:)``), computed once by ``encode(_:key:keySource:)``: the context and
    /// the connection both read it.
    package var keyHash: Int64 { buffer.keyHash }

    /// The hash the key index holds: XXH64 of the key's UTF-8 bytes, as a signed 64-bit integer.
    package static func keyHash(_ key: String) -> Int64 {
        var key = key
        return key.withUTF8 { Int64(bitPattern: ArticleHasher.xxHash64(UnsafeRawBufferPointer($0))) }
    }

    /// A column's bytes in the buffer, or `nil` when the value is absent (NULL). Valid until the next encode.
    package func bytes(_ column: Column) -> UnsafeRawBufferPointer? {
        let span = buffer.spans[column.rawValue]
        return span.length < 0 ? nil : UnsafeRawBufferPointer(start: buffer.base + span.offset, count: span.length)
    }

    /// The fallback key (``ArticleHasher/fallbackKey(of:)``); overwrites the buffer.
    package func fallbackKey(of article: Article) -> String {
        storage.pointee.fallbackKey(of: article)
    }
}

/// ``ArticleRow``'s buffer and the encoder that fills it. Its memory is freed by the row's `deinit` (`deallocate()`).
private struct RowBuffer {
    typealias Column = ArticleRow.Column

    private(set) var base: UnsafeMutableRawPointer
    private var capacity: Int
    private var count = 0
    /// Each column's bytes in the buffer (length -1: absent); a fixed allocation, written in place.
    let spans: UnsafeMutablePointer<(offset: Int, length: Int)>
    private(set) var hashedLength = 0
    /// The key's hash, set by `ArticleRow.encode` after each encode.
    var keyHash: Int64 = 0

    init() {
        capacity = 16 * 1024
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        spans = UnsafeMutablePointer.allocate(capacity: Column.allCases.count)
        spans.initialize(repeating: (0, -1), count: Column.allCases.count)
    }

    func deallocate() {
        base.deallocate()
        spans.deallocate()
    }

    mutating func encode(_ article: borrowing Article, key: String, keySource: String) {
        count = 0
        text(.identifier, article.id)
        text(.idSource, article.idSource.rawValue)
        text(.title, article.title)
        text(.link, article.link)
        date(article.published)
        text(.publishedRaw, article.publishedRaw)
        date(article.updated)
        text(.updatedRaw, article.updatedRaw)
        if article.authors.isEmpty { absent(.authors) } else {
            let start = beginColumn()
            writeAuthors(article.authors)
            endColumn(.authors, start)
        }
        if let summary = article.summary {
            text(.summary, summary.utf8)
            text(.summaryType, summary.type.rawValue)
        } else {
            absent(.summary)
            absent(.summaryType)
        }
        if let content = article.content {
            text(.content, content.utf8)
            text(.contentType, content.type.rawValue)
        } else {
            absent(.content)
            absent(.contentType)
        }
        if article.categories.isEmpty { absent(.categories) } else {
            let start = beginColumn()
            writeStrings(article.categories)
            endColumn(.categories, start)
        }
        if article.enclosures.isEmpty { absent(.enclosures) } else {
            let start = beginColumn()
            writeEnclosures(article.enclosures)
            endColumn(.enclosures, start)
        }
        text(.image, article.image)
        text(.comments, article.comments)
        text(.commentsFeed, article.commentsFeed)
        text(.language, article.language)
        if let podcast = article.podcast, !podcast.isEmpty {
            let start = beginColumn()
            writePodcast(podcast)
            endColumn(.podcast, start)
        } else {
            absent(.podcast)
        }
        if Self.hasDetails(article) {
            appendByte(0xFE)
            let start = beginColumn()
            writeDetails(article)
            endColumn(.details, start)
        } else {
            spans[Column.details.rawValue] = (0, -1)
        }
        hashedLength = count
        text(.key, key)
        text(.keySource, keySource)
    }

    mutating func fallbackKey(of article: Article) -> String {
        count = 0
        text(.title, article.title)
        date(article.published)
        text(.publishedRaw, article.publishedRaw)
        let content = article.content ?? article.summary
        text(.content, content?.utf8)
        text(.contentType, content?.type.rawValue)
        let hash = ArticleHasher.xxHash64(UnsafeRawBufferPointer(start: base, count: count))
        let hex = String(hash, radix: 16)
        return "hash:" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    // MARK: Encoding

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(extra) }
    }

    @inline(never)
    private mutating func grow(_ extra: Int) {
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        grown.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    private mutating func append32(_ value: UInt32) {
        reserve(4)
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt32.self)
        count += 4
    }

    private mutating func appendByte(_ byte: UInt8) {
        reserve(1)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    private mutating func appendBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    private mutating func appendUTF8(_ value: String) {
        var value = value
        value.withUTF8 { appendBytes(UnsafeRawBufferPointer($0)) }
    }

    private mutating func appendASCII(_ value: StaticString) {
        appendBytes(UnsafeRawBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount))
    }

    private mutating func text(_ column: Column, _ value: String?) {
        guard var value else { return absent(column) }
        value.withUTF8 { text(column, UnsafeRawBufferPointer($0)) }
    }

    private mutating func text(_ column: Column, _ value: [UInt8]?) {
        guard let value else { return absent(column) }
        value.withUnsafeBytes { text(column, $0) }
    }

    /// A column's bytes, after their length (32 bits, little-endian).
    private mutating func text(_ column: Column, _ bytes: UnsafeRawBufferPointer) {
        let start = beginColumn()
        appendBytes(bytes)
        endColumn(column, start)
    }

    /// Starts a present column: room for its length; returns where its bytes start.
    private mutating func beginColumn() -> Int {
        append32(0)
        return count
    }

    /// Ends a present column begun at `start`: its length before it, its span.
    private mutating func endColumn(_ column: Column, _ start: Int) {
        base.storeBytes(of: UInt32(truncatingIfNeeded: count - start).littleEndian, toByteOffset: start - 4, as: UInt32.self)
        spans[column.rawValue] = (start, count - start)
    }

    /// An absent column (NULL): the length 0xFFFFFFFF.
    private mutating func absent(_ column: Column) {
        append32(UInt32.max)
        spans[column.rawValue] = (0, -1)
    }

    private mutating func date(_ value: Date?) {
        guard let value else { return appendByte(0) }
        appendByte(1)
        reserve(8)
        base.storeBytes(of: value.timeIntervalSince1970.bitPattern.littleEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }

    // MARK: JSON (RFC 8259), written straight into the buffer

    private mutating func jsonString(_ value: String) {
        appendByte(0x22)
        if value.utf8.withContiguousStorageIfAvailable({ jsonEscaped($0) }) == nil {
            var copy = value
            copy.withUTF8 { jsonEscaped($0) }
        }
        appendByte(0x22)
    }

    /// Appends `bytes` escaped for a JSON string; the runs between escapes, found sixteen bytes at a time
    /// (`CByteScan`), are copied whole.
    private mutating func jsonEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var clean = 0
        var index = feedingest_bytescan_json_escape(base, 0, count)
        while index < count {
            appendBytes(UnsafeRawBufferPointer(start: base + clean, count: index - clean))
            let byte = base[index]
            switch byte {
            case 0x22: appendASCII("\\\"")
            case 0x5C: appendASCII("\\\\")
            case 0x0A: appendASCII("\\n")
            case 0x0D: appendASCII("\\r")
            case 0x09: appendASCII("\\t")
            default:
                let hex: StaticString = "0123456789abcdef"
                appendASCII("\\u00")
                appendByte(hex.utf8Start[Int(byte >> 4)])
                appendByte(hex.utf8Start[Int(byte & 0xF)])
            }
            clean = index + 1
            index = feedingest_bytescan_json_escape(base, clean, count)
        }
        appendBytes(UnsafeRawBufferPointer(start: base + clean, count: count - clean))
    }

    private mutating func jsonNumber(_ value: Int64) { appendUTF8(String(value)) }

    /// Writes `"name":` after a comma unless it is the object's first member.
    private mutating func member(_ name: StaticString, first: inout Bool) {
        if !first { appendByte(0x2C) }
        first = false
        appendByte(0x22)
        appendASCII(name)
        appendASCII("\":")
    }

    private mutating func member(_ name: StaticString, _ value: String?, first: inout Bool) {
        guard let value else { return }
        member(name, first: &first)
        jsonString(value)
    }

    private mutating func member(_ name: StaticString, _ value: Int64?, first: inout Bool) {
        guard let value else { return }
        member(name, first: &first)
        jsonNumber(value)
    }

    private mutating func writeStrings(_ values: [String]) {
        appendByte(0x5B)
        for (index, value) in values.enumerated() {
            if index > 0 { appendByte(0x2C) }
            jsonString(value)
        }
        appendByte(0x5D)
    }

    private mutating func writeAuthors(_ people: [Person]) {
        appendByte(0x5B)
        for (index, person) in people.enumerated() {
            if index > 0 { appendByte(0x2C) }
            appendByte(0x7B)
            var first = true
            member("name", person.name, first: &first)
            member("email", person.email, first: &first)
            member("uri", person.uri, first: &first)
            member("avatar", person.avatar, first: &first)
            appendByte(0x7D)
        }
        appendByte(0x5D)
    }

    private mutating func writeEnclosures(_ enclosures: [Enclosure]) {
        appendByte(0x5B)
        for (index, enclosure) in enclosures.enumerated() {
            if index > 0 { appendByte(0x2C) }
            appendByte(0x7B)
            var first = true
            member("url", enclosure.url, first: &first)
            member("type", enclosure.type, first: &first)
            member("length", enclosure.length, first: &first)
            member("title", enclosure.title, first: &first)
            member("durationSeconds", enclosure.durationSeconds.map(Int64.init), first: &first)
            appendByte(0x7D)
        }
        appendByte(0x5D)
    }

    /// Whether the article has any field of the `details` column.
    private static func hasDetails(_ article: borrowing Article) -> Bool {
        article.externalURL != nil || article.contentText != nil || article.bannerImage != nil || !article.links.isEmpty
            || !article.categoryDetails.isEmpty || article.contentSource != nil || article.license != nil
            || article.rights != nil || !article.contributors.isEmpty
    }

    /// The `details` column: `{"externalURL":…,"contentText":…,"bannerImage":…,"links":[…],"categoryDetails":[…],
    /// "contentSource":{…},"license":…,"rights":…,"contributors":[…]}`, absent members left out (the names of the
    /// article JSON).
    private mutating func writeDetails(_ article: borrowing Article) {
        appendByte(0x7B)
        var first = true
        member("externalURL", article.externalURL, first: &first)
        member("contentText", article.contentText, first: &first)
        member("bannerImage", article.bannerImage, first: &first)
        if !article.links.isEmpty {
            member("links", first: &first)
            appendByte(0x5B)
            for (index, link) in article.links.enumerated() {
                if index > 0 { appendByte(0x2C) }
                writeLink(link)
            }
            appendByte(0x5D)
        }
        if !article.categoryDetails.isEmpty {
            member("categoryDetails", first: &first)
            appendByte(0x5B)
            for (index, category) in article.categoryDetails.enumerated() {
                if index > 0 { appendByte(0x2C) }
                appendByte(0x7B)
                var inner = true
                member("term", category.term, first: &inner)
                member("scheme", category.scheme, first: &inner)
                member("label", category.label, first: &inner)
                member("parent", category.parent, first: &inner)
                appendByte(0x7D)
            }
            appendByte(0x5D)
        }
        if let source = article.contentSource {
            member("contentSource", first: &first)
            writeLink(source)
        }
        member("license", article.license, first: &first)
        member("rights", article.rights, first: &first)
        if !article.contributors.isEmpty {
            member("contributors", first: &first)
            writeAuthors(article.contributors)
        }
        appendByte(0x7D)
    }

    private mutating func writeLink(_ link: Link) {
        appendByte(0x7B)
        var first = true
        member("href", link.href, first: &first)
        member("rel", link.rel, first: &first)
        member("type", link.type, first: &first)
        member("title", link.title, first: &first)
        member("hreflang", link.hreflang, first: &first)
        member("length", link.length, first: &first)
        appendByte(0x7D)
    }

    private mutating func writePodcast(_ podcast: PodcastDetails) {
        appendByte(0x7B)
        var first = true
        member("durationSeconds", podcast.durationSeconds.map(Int64.init), first: &first)
        member("episode", podcast.episode.map(Int64.init), first: &first)
        member("season", podcast.season.map(Int64.init), first: &first)
        if let explicit = podcast.explicit {
            member("explicit", first: &first)
            if explicit { appendASCII("true") } else { appendASCII("false") }
        }
        if !podcast.keywords.isEmpty {
            member("keywords", first: &first)
            writeStrings(podcast.keywords)
        }
        member("guid", podcast.guid, first: &first)
        if !podcast.transcripts.isEmpty {
            member("transcripts", first: &first)
            appendByte(0x5B)
            for (index, transcript) in podcast.transcripts.enumerated() {
                if index > 0 { appendByte(0x2C) }
                appendByte(0x7B)
                var inner = true
                member("url", transcript.url, first: &inner)
                member("type", transcript.type, first: &inner)
                member("language", transcript.language, first: &inner)
                appendByte(0x7D)
            }
            appendByte(0x5D)
        }
        member("chaptersURL", podcast.chaptersURL, first: &first)
        appendByte(0x7D)
    }
}
