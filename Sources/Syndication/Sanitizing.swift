// `--sanitize`: the HTML of an article's title, summary and content, and of the feed's title and description, cleaned
// by SafeHTML's HTMLSanitizer as each article is delivered.

import SafeHTML

extension HTMLSanitizer {
    /// The article with its HTML cleaned: summary and content when they are HTML, and the title when it holds markup
    /// (a `<`; its inner markup is kept as text by the parser, so a title without `<` has nothing to clean).
    func sanitizing(_ article: Article) -> Article {
        var article = article
        article.title = article.title.map(sanitizing(title:))
        article.summary = article.summary.map(sanitizing)
        article.content = article.content.map(sanitizing)
        return article
    }

    /// The metadata with its title and description cleaned as an article's are.
    func sanitizing(_ metadata: FeedMetadata) -> FeedMetadata {
        var metadata = metadata
        metadata.title = metadata.title.map(sanitizing(title:))
        metadata.description = metadata.description.map(sanitizing)
        return metadata
    }

    private func sanitizing(title: String) -> String {
        title.utf8.contains(UInt8(ascii: "<")) ? sanitize(title) : title
    }

    private func sanitizing(_ text: TextContent) -> TextContent {
        text.type == .html ? TextContent(sanitize(text.value), type: .html) : text
    }
}

/// The feed metadata last cleaned, so that a feed's description is cleaned once, not once per article.
final class SanitizedMetadataCache {
    private let sanitizer: HTMLSanitizer
    private var last: (original: FeedMetadata, cleaned: FeedMetadata)?

    init(sanitizer: HTMLSanitizer) { self.sanitizer = sanitizer }

    func cleaned(_ metadata: FeedMetadata) -> FeedMetadata {
        if let last, last.original == metadata { return last.cleaned }
        let cleaned = sanitizer.sanitizing(metadata)
        last = (metadata, cleaned)
        return cleaned
    }
}
