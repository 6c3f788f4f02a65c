import Fetch
import Foundation
import Support
import Testing

/// `Redaction`: the display form of URLs and messages, a user information's password replaced by `***`.
@Suite("Redaction of passwords in URLs")
struct RedactionTests {
    @Test(arguments: [
        // The password masked, the user kept, the rest as written.
        ("http://user:s3cret@127.0.0.1:8080/feed.xml", "http://user:***@127.0.0.1:8080/feed.xml"),
        ("HTTPS://user:s3cret@127.0.0.1/a/b?c=d#e", "HTTPS://user:***@127.0.0.1/a/b?c=d#e"),
        ("http://user:s3cret@127.0.0.1", "http://user:***@127.0.0.1"),
        // Percent-encoded `@` in the user and the password.
        ("https://me%40example.org:p%40ss@127.0.0.1/x", "https://me%40example.org:***@127.0.0.1/x"),
        // A `:` inside the password: everything after the user's first `:`.
        ("http://user:pa:ss@127.0.0.1/", "http://user:***@127.0.0.1/"),
        // IPv6 hosts, with and without a port.
        ("http://user:s3cret@[::1]:8080/feed", "http://user:***@[::1]:8080/feed"),
        ("http://user:s3cret@[2001:db8::1]/feed", "http://user:***@[2001:db8::1]/feed"),
        // A password without a user.
        ("http://:s3cret@127.0.0.1/feed", "http://:***@127.0.0.1/feed"),
        // A user without a password: nothing to hide.
        ("http://user@127.0.0.1/feed", "http://user@127.0.0.1/feed"),
        // No user information; `@` and `:` later in the URL are not credentials.
        ("https://127.0.0.1/feed.xml", "https://127.0.0.1/feed.xml"),
        ("https://127.0.0.1/people/@me:x/feed", "https://127.0.0.1/people/@me:x/feed"),
        ("https://127.0.0.1/feed?mail=a:b@c", "https://127.0.0.1/feed?mail=a:b@c"),
        ("https://127.0.0.1/feed#a:b@c", "https://127.0.0.1/feed#a:b@c"),
        // Strings libcurl refuses still lose their password (the plain fallback): a raw `@` in the password, a space,
        // a scheme libcurl does not know with an odd port.
        ("http://user:pa@ss@127.0.0.1/feed", "http://user:***@127.0.0.1/feed"),
        ("http://user:s3cret@127.0.0.1/my feed.xml", "http://user:***@127.0.0.1/my feed.xml"),
        ("gopher+x://user:s3cret@127.0.0.1:99999/", "gopher+x://user:***@127.0.0.1:99999/"),
        // Not URLs, and file paths: unchanged.
        ("", ""),
        ("not a url", "not a url"),
        ("someone@example.org", "someone@example.org"),
        ("user:s3cret@127.0.0.1", "user:s3cret@127.0.0.1"),
        ("/home/me/feeds@2/feed:1.xml", "/home/me/feeds@2/feed:1.xml"),
        ("file:///tmp/a:b@c/feed.xml", "file:///tmp/a:b@c/feed.xml"),
    ])
    func redactsTheUserInformationPassword(url: String, expected: String) {
        #expect(Redaction.redactedURL(url) == expected)
    }

    @Test func anEmptyPasswordIsMaskedOrKeptButNeverAddsOne() {
        // libcurl reads `user:@host` as an empty password; whichever it is, nothing of it can leak and the rest stays.
        let shown = Redaction.redactedURL("http://user:@127.0.0.1/")
        #expect(shown == "http://user:***@127.0.0.1/" || shown == "http://user:@127.0.0.1/")
    }

    @Test func redactionIsIdempotent() {
        let once = Redaction.redactedURL("http://user:s3cret@127.0.0.1/feed")
        #expect(Redaction.redactedURL(once) == once)
        #expect(Redaction.redactedText(once) == once)
    }

    @Test func textMasksEveryURLItQuotes() {
        let message = "cannot fetch http://u:p1secret@127.0.0.1:9/a (redirected from 'https://v:p2secret@[::1]/b'); see <ftp://w:p3secret@host>"
        let shown = Redaction.redactedText(message)
        #expect(shown == "cannot fetch http://u:***@127.0.0.1:9/a (redirected from 'https://v:***@[::1]/b'); see <ftp://w:***@host>")
        for secret in ["p1secret", "p2secret", "p3secret"] { #expect(!shown.contains(secret)) }
    }

    @Test func textWithoutCredentialsIsUnchanged() {
        for text in ["Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
                     "mail someone@example.org about https://127.0.0.1/feed?a=b:c@d", "", "ünïcode @ :// ok"] {
            #expect(Redaction.redactedText(text) == text)
        }
    }

    @Test func aFetchErrorDescribesItsURLWithoutThePasswordAndKeepsIt() {
        let url = "http://user:s3cret@127.0.0.1:9/feed.xml"
        let error = FetchError(kind: .connectionRefused, message: "redirected to http://user:s3cret@127.0.0.1:10/x", url: url)
        #expect(error.description == "http://user:***@127.0.0.1:9/feed.xml: redirected to http://user:***@127.0.0.1:10/x")
        #expect(error.url == url)
    }

    @Test func theFetchStillCarriesTheCredentialsOfTheRequest() {
        // Redaction makes display copies only: a request keeps its URL as given.
        let request = FetchRequest(url: URL(string: "http://user:s3cret@127.0.0.1:9/feed.xml")!)
        #expect(request.url.absoluteString.contains("s3cret"))
    }
}
