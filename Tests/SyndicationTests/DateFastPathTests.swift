import Foundation
@testable import Syndication
import Testing

/// `FeedDate.canonicalRFC822`, the fixed-place reading of `Ddd, DD Mmm YYYY HH:MM:SS +hhmm` and `… GMT`, against the
/// field-by-field reader it stands in front of: whatever it returns, that one returns too.
@Suite struct DateFastPathTests {
    static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun", "mon", "Xyz", "Tu1"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "jan", "DEC", "Foo"]

    /// Generated dates of both canonical lengths, most valid, some with a value out of range, a wrong name, a bad digit
    /// or a zone past ±14 h: wherever the fast path gives a date, it is the field reader's, and it gives one for every
    /// valid date (so the benchmark's dates do take it).
    @Test func agreesWithTheFieldByFieldReader() {
        var random = SystemRandomNumberGenerator()
        var taken = 0
        for round in 0..<20_000 {
            let weekday = Self.weekdays.randomElement(using: &random)!
            let month = Self.months.randomElement(using: &random)!
            let day = Int.random(in: 0...35, using: &random), year = Int.random(in: 1900...2100, using: &random)
            let hour = Int.random(in: 0...25, using: &random), minute = Int.random(in: 0...61, using: &random)
            let second = Int.random(in: 0...61, using: &random)
            let zone = round % 3 == 0 ? "GMT" : String(format: "%@%02d%02d", Bool.random(using: &random) ? "+" : "-",
                                                      Int.random(in: 0...16, using: &random), Int.random(in: 0...61, using: &random))
            var text = String(format: "%@, %02d %@ %04d %02d:%02d:%02d %@", weekday, day, month, year, hour, minute, second, zone)
            if round % 17 == 0 {  // a stray byte somewhere
                var bytes = Array(text.utf8)
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = [0x20, 0x3A, 0x41, 0x39, 0x2C].randomElement(using: &random)!
                text = String(decoding: bytes, as: UTF8.self)
            }
            let (fast, fields) = Array(text.utf8).withUnsafeBufferPointer { (FeedDate.canonicalRFC822($0), FeedDate.rfc822Fields($0)) }
            if let fast {
                taken += 1
                #expect(fast == fields, "\(text)")
            }
            let valid = Self.weekdays.prefix(8).contains(weekday) && Self.months.prefix(14).contains(month) && (1...31).contains(day)
                && hour < 24 && minute < 60 && second < 60 && round % 17 != 0
                && (zone == "GMT" || (Int(zone.dropFirst().prefix(2))! <= 14 && Int(zone.suffix(2))! < 60))
            if valid && fields != nil { #expect(fast != nil, "the fast path left \(text) to the field reader") }
        }
        #expect(taken > 5_000)
    }
}
