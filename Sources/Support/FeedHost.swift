// The host a feed counts under for the per-host limits.
import Foundation

/// The host a feed is fetched from, as the per-host limits count it: `host:port` in lower case, with the scheme's
/// default port; `nil` for a local file or a URL without a host.
public enum FeedHost {
    /// The host key of a feed URL.
    public static func key(of url: String) -> String? {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = parsed.host, !host.isEmpty else { return nil }
        return "\(host.lowercased()):\(parsed.port ?? (scheme == "https" ? 443 : 80))"
    }
}
