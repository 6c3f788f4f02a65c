import Foundation
import TestSupport

/// The external XML corpora in `<package root>/../shared/corpus` (DESIGN.md, "External corpora"), shared by the
/// differential and the chunking tests. Never copied into the repository.
enum DifferentialCorpus {
    /// `<package root>/../shared/corpus`.
    static let root: URL = Paths.corpus

    /// The directories, relative to ``root``, whose XML files the tests use.
    static let directories = ["gofeed/testdata", "realworld"]

    /// File name extensions that hold XML in these corpora (`.json` feeds and the docs are not XML).
    static let xmlExtensions: Set<String> = ["xml", "rss", "atom", "rdf", "rss2", "opml", "xhtml"]

    /// One corpus file: its path relative to ``root`` (the allow-list key) and its bytes.
    struct File: Sendable, CustomStringConvertible {
        let path: String
        let bytes: [UInt8]
        var description: String { path }
    }

    /// Every XML file under ``directories``, sorted by path. Empty when the corpus is missing.
    static func xmlFiles() -> [File] {
        var files: [File] = []
        for directory in directories {
            let base = root.appendingPathComponent(directory, isDirectory: true)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) else {
                continue
            }
            for case let url as URL in walker where xmlExtensions.contains(url.pathExtension.lowercased()) {
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                      let data = FileManager.default.contents(atPath: url.path) else { continue }
                let relative = String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count))
                files.append(File(path: relative.hasPrefix("/") ? String(relative.dropFirst()) : relative, bytes: Array(data)))
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// Every file under ``directories`` that is neither XML by extension nor known not to be, so a new kind of
    /// corpus file is noticed instead of silently ignored.
    static func unclassifiedFiles() -> [String] {
        let notXML: Set<String> = ["json", "md", ""]
        var paths: [String] = []
        for directory in directories {
            let base = root.appendingPathComponent(directory, isDirectory: true)
            guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) else {
                continue
            }
            for case let url as URL in walker {
                guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
                let ext = url.pathExtension.lowercased()
                if !xmlExtensions.contains(ext) && !notXML.contains(ext) { paths.append(url.path) }
            }
        }
        return paths.sorted()
    }
}
