import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The generator's formats, by the name the benchmark has always used (Syndication has a `FeedFormat` of its own).
typealias FeedFormat = FeedGenerator.Format

/// A generated feed on disk, with the manifest that says what is in it.
struct Fixture {
    /// A short name for tables and JSON, such as `rss-20MB`.
    let name: String
    let path: String
    let manifest: FeedManifest

    /// The feeds the benchmark uses.
    static let rss20MB = (name: "rss-20MB", format: FeedFormat.rss, items: 16_000)
    static let atom20MB = (name: "atom-20MB", format: FeedFormat.atom, items: 16_000)
    static let rss200MB = (name: "rss-200MB", format: FeedFormat.rss, items: 160_000)
    /// For the rate-limited HTTP runs: about 2.7 MB, so a run at 1 MiB/s takes seconds.
    static let rss2MB = (name: "rss-2.7MB", format: FeedFormat.rss, items: 2_000)

    /// Returns the cached fixture, generating it (streaming, 64 KiB at a time) when it is missing or stale.
    static func ensure(name: String, format: FeedFormat, items: Int, seed: UInt64 = 0, directory: String,
                       stem: String? = nil) throws -> Fixture {
        let base = "\(directory)/\(stem ?? "\(format.rawValue)-\(items)")-v\(FeedGenerator.version)"
        let path = base + ".xml", manifestPath = base + ".json"
        if let data = FileManager.default.contents(atPath: manifestPath),
           let manifest = try? JSONDecoder().decode(FeedManifest.self, from: data),
           manifest.generatorVersion == FeedGenerator.version, manifest.format == format, manifest.items == items,
           let attributes = try? FileManager.default.attributesOfItem(atPath: path),
           (attributes[.size] as? NSNumber)?.intValue == manifest.bytes {
            return Fixture(name: name, path: path, manifest: manifest)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if stem == nil { log("generating \(path) (\(items) items)…") }
        let start = monotonicNanos()
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw FixtureError(message: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        let manifest: FeedManifest
        do {
            defer { close(fd) }
            manifest = try FeedGenerator(format: format, items: items, seed: seed).generate { chunk in
                var offset = 0
                while offset < chunk.count {
                    let written = write(fd, chunk.baseAddress! + offset, chunk.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { throw FixtureError(message: "writing \(temporary) failed: \(String(cString: strerror(errno)))") }
                    offset += written
                }
            }
        }
        guard rename(temporary, path) == 0 else { throw FixtureError(message: "cannot rename \(temporary) to \(path)") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(manifest).write(to: URL(fileURLWithPath: manifestPath))
        if stem == nil { log(String(format: "  %.1f MB in %.1f s", Double(manifest.bytes) / 1e6, Double(monotonicNanos() - start) / 1e9)) }
        return Fixture(name: name, path: path, manifest: manifest)
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Progress goes to stderr, so stdout holds only the table and the JSON line.
func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
