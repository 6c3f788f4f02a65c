import Foundation
import Syndication
import Testing

/// The public model's own logic.
@Suite struct ModelTests {
    /// `PodcastDetails.isEmpty` is written field by field (issue 18): each field alone makes a value non-empty, and a new
    /// stored property fails the count below until `isEmpty` reads it too.
    @Test func podcastDetailsAreEmptyOnlyWithoutEveryField() {
        #expect(PodcastDetails().isEmpty)
        let oneFieldEach: [(String, (inout PodcastDetails) -> Void)] = [
            ("durationSeconds", { $0.durationSeconds = 0 }),
            ("episode", { $0.episode = 0 }),
            ("season", { $0.season = 0 }),
            ("explicit", { $0.explicit = false }),
            ("keywords", { $0.keywords = [""] }),
            ("guid", { $0.guid = "" }),
            ("transcripts", { $0.transcripts = [Transcript(url: "")] }),
            ("chaptersURL", { $0.chaptersURL = "" }),
        ]
        for (name, set) in oneFieldEach {
            var details = PodcastDetails()
            set(&details)
            #expect(!details.isEmpty, "\(name)")
            #expect(details != PodcastDetails(), "\(name)")
        }
        let stored = Mirror(reflecting: PodcastDetails()).children.compactMap(\.label)
        #expect(Set(stored) == Set(oneFieldEach.map(\.0)))
    }
}
