import Foundation

/// Where things are in the checkout and beside it, found from this file (`Tests/TestSupport/Paths.swift`): the
/// package root is three levels up, and the shared corpora sit next to it, as CI lays them out.
public enum Paths {
    /// The package root (the directory holding `Package.swift`).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root

    /// `../shared/corpus`: the external corpora (gofeed's testdata, NetNewsWire's real-world feeds). Never copied
    /// into the repository.
    public static let corpus: URL = packageRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/corpus", isDirectory: true)

    /// NetNewsWire's RSParser corpus, with its `manifest.json`.
    public static let rsparser: URL = corpus.appendingPathComponent("realworld/rsparser", isDirectory: true)

    /// The real-world feed files of the RSParser corpus (`atp.rss`, `bio.rdf`, …).
    public static let realworld: URL = rsparser.appendingPathComponent("Tests/RSParserTests/Resources", isDirectory: true)

    /// gofeed's test data.
    public static let gofeed: URL = corpus.appendingPathComponent("gofeed", isDirectory: true)

    /// A file in `scripts/`, such as `fault_server.py`.
    public static func script(_ name: String) -> URL {
        packageRoot.appendingPathComponent("scripts").appendingPathComponent(name)
    }

    /// A JSON Schema in `Schemas/`.
    public static func schema(_ name: String) -> URL {
        packageRoot.appendingPathComponent("Schemas").appendingPathComponent(name)
    }

    /// A new, empty directory under the system temporary directory; the caller removes it.
    public static func temporaryDirectory(_ prefix: String = "feedingest-test") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// An executable product (`feedingest`, `StoreProbe`, `feedingest-bench`, …) built into the same directory as the
    /// running test bundle or benchmark, or `nil`. `swift build --build-tests` builds every product there.
    public static func builtExecutable(_ name: String) -> URL? {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var candidates: [URL] = []
        for start in [bundle, executable] {
            // A bundle is a file (Linux) or a directory tree (Darwin: .xctest/Contents/MacOS/…): walk up a few levels.
            var directory = start.deletingLastPathComponent()
            for _ in 0..<4 {
                candidates.append(directory.appendingPathComponent(name))
                directory = directory.deletingLastPathComponent()
            }
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}

/// Why a helper of this module could not do its job (a server did not start, a child could not be spawned, …).
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, for the test's failure message.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
