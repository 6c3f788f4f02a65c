/// Median, quartiles and extremes of a sample.
struct Summary: Codable, Sendable {
    var median: Double
    var q1: Double
    var q3: Double
    var min: Double
    var max: Double
    var count: Int

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func quantile(_ q: Double) -> Double {
            // Linear interpolation between closest ranks (type 7, the R and NumPy default).
            let position = q * Double(sorted.count - 1)
            let lower = Int(position.rounded(.down)), upper = Int(position.rounded(.up))
            return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
        }
        median = quantile(0.5)
        q1 = quantile(0.25)
        q3 = quantile(0.75)
        min = sorted.first!
        max = sorted.last!
        count = sorted.count
    }

    func scaled(by factor: Double) -> Summary {
        var copy = self
        copy.median *= factor
        copy.q1 *= factor
        copy.q3 *= factor
        copy.min *= factor
        copy.max *= factor
        return copy
    }
}
