import Downloads
import Foundation
import Testing

/// File names: from the URL path without the query, else the title; safe on any file system; templates.
@Suite("Download file names")
struct NamingTests {
    let naming = DownloadNaming()

    @Test func theURLPathNamesTheFileWithoutItsQuery() {
        let values = DownloadNaming.Values(url: "https://cdn.example.com/shows/ep%2042.mp3?token=abc&x=1#t=3", mediaType: "audio/mpeg",
                                           feedTitle: "My Show", title: "Episode 42")
        #expect(naming.relativePath(for: values) == "My Show/ep 42.mp3")
    }

    @Test func aURLWithoutAFileNameFallsBackToTheTitle() {
        let values = DownloadNaming.Values(url: "https://example.com/?id=7", mediaType: "audio/mp4", feedTitle: nil,
                                           feedURL: "https://feeds.example.org/pod.xml", title: "The: \"best\" / worst?")
        #expect(naming.relativePath(for: values) == "feeds.example.org/The_ _best_ _ worst_.m4a")
    }

    @Test func namesAreSafe() {
        let values = DownloadNaming.Values(url: "https://example.com/..%2F..%2Fetc%2Fpasswd", feedTitle: "../../evil\u{0}\n name")
        let path = naming.relativePath(for: values)
        #expect(!path.split(separator: "/").contains { $0 == ".." || $0 == "." || $0.hasPrefix(".") })
        #expect(path.split(separator: "/").count == 2)
        #expect(!path.contains("\u{0}") && !path.contains("\n"))
        let long = DownloadNaming.Values(url: "https://example.com/" + String(repeating: "é", count: 300) + ".mp3")
        let name = String(naming.relativePath(for: long).split(separator: "/").last!)
        #expect(name.utf8.count <= 180 && name.hasSuffix(".mp3"))
    }

    @Test func templatesFillEveryPlaceholder() throws {
        let naming = DownloadNaming(template: "{feed}/{date} {title}.{ext}")
        let values = DownloadNaming.Values(url: "https://example.com/a/b/file.OGG?x", feedTitle: "Feed", title: "Hello",
                                           date: Date(timeIntervalSince1970: 1_780_000_000))
        #expect(naming.relativePath(for: values) == "Feed/2026-05-28 Hello.ogg")
        #expect(DownloadNaming.problem(with: "{feed}/{nope}") != nil)
        #expect(DownloadNaming.problem(with: "/abs/{file}") != nil)
        #expect(DownloadNaming.problem(with: "../{file}") != nil)
        #expect(DownloadNaming.problem(with: "{feed}/") != nil)
        #expect(DownloadNaming.problem(with: "{feed") != nil)
        #expect(DownloadNaming.problem(with: "{feed}/{date}-{file}") == nil)
    }

    @Test func numberedNamesKeepTheExtension() {
        #expect(DownloadNaming.numbered("/d/f/ep.mp3", 1) == "/d/f/ep.mp3")
        #expect(DownloadNaming.numbered("/d/f/ep.mp3", 2) == "/d/f/ep (2).mp3")
        #expect(DownloadNaming.numbered("/d/f.x/episode", 3) == "/d/f.x/episode (3)")
    }

    @Test func typesMatchWithWildcards() {
        var configuration = DownloadConfiguration(directory: "/tmp")
        #expect(configuration.wants(mediaType: nil))
        configuration.mediaTypes = ["audio/*", "video/mp4"]
        #expect(configuration.wants(mediaType: "audio/mpeg"))
        #expect(configuration.wants(mediaType: "Video/MP4; codecs=avc1"))
        #expect(!configuration.wants(mediaType: "video/webm"))
        #expect(!configuration.wants(mediaType: nil))
    }

    @Test func theDefaultDirectoryFollowsXDG() {
        #expect(DownloadConfiguration.defaultDirectory(environment: ["FEEDINGEST_DOWNLOADS": "/media/pods", "HOME": "/h"]) == "/media/pods")
        #expect(DownloadConfiguration.defaultDirectory(environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]) == "/x/feedingest/downloads")
        #expect(DownloadConfiguration.defaultDirectory(environment: ["XDG_DATA_HOME": "rel", "HOME": "/h"])
                == "/h/.local/share/feedingest/downloads")
    }
}
