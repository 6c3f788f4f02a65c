/// SplitMix64 (Steele, Lea, Flood 2014; the reference `splitmix64.c`): a tiny, fast, deterministic generator, the
/// same on every platform and toolchain, so generated feeds, articles and random splits are reproducible from their
/// seed. Bounded values are derived here, not by the standard library's `random(in:using:)`, whose algorithm is not
/// promised to stay the same.
public struct SplitMix64: Sendable {
    @usableFromInline var state: UInt64

    @inlinable
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (the modulo bias is irrelevant here).
    @inlinable
    public mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
