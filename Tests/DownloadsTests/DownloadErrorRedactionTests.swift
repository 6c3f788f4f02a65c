import Downloads
import Testing

/// A download error names its enclosure's URL for people without the password, and keeps the URL itself.
@Suite("Download errors without passwords")
struct DownloadErrorRedactionTests {
    @Test func descriptionMasksThePassword() {
        let url = "http://user:s3cret@127.0.0.1:9/media/episode.mp3"
        let error = DownloadError(kind: .badResponse, message: "HTTP status 500", url: url)
        #expect(error.description == "http://user:***@127.0.0.1:9/media/episode.mp3: HTTP status 500")
        #expect(error.url == url)
    }
}
