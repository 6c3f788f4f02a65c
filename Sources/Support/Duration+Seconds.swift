// Durations as the numbers C calls and people want: the one set of conversions.

extension Duration {
    /// The duration in seconds.
    @inlinable
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration in whole milliseconds, rounded up (a timeout is never shortened), clamped to `Int`.
    @inlinable
    public var millisecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? Int.min : Int.max }
        let (total, overflowAgain) = whole.addingReportingOverflow((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        guard !overflowAgain else { return Int.max }
        return Int(clamping: total)
    }

    /// `seconds` to the millisecond, rounded by `rule` (a duration option's value).
    @inlinable
    public static func seconds(_ seconds: Double, rounding rule: FloatingPointRoundingRule) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded(rule)))
    }
}
