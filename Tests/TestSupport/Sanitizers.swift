import Foundation

/// Whether the tests run under a sanitizer: `make test-asan` and `make test-tsan` set `FEEDINGEST_SANITIZER` to
/// `address` or `thread`. Tests of peak memory are skipped then: the sanitizers' shadow memory and quarantine push a
/// process far past bounds that hold without them (143 MiB under ASan and 460 MiB under TSan measured for a 32 MiB
/// bound), which says nothing about the code.
public enum SanitizerRun {
    /// `address`, `thread`, or `nil` without a sanitizer.
    public static let name: String? = ProcessInfo.processInfo.environment["FEEDINGEST_SANITIZER"]
    /// Whether a sanitizer is on.
    public static var isActive: Bool { name != nil }
}
