import Foundation
import Testing
@testable import feedingest

/// The command-line parser and the option table: names, values, typos, conversions, and the help they write.
@Suite("Arguments and OptionTable: parsing against a table, conversions, the Options section")
struct ArgumentsTests {
    static let verbose = Flag("-v", "--verbose", help: "say more")
    static let count = ValueOption<Int>("--count", "N", .number(in: 1...9), help: "how many")
    static let tag = ValueOption<String>("--tag", "TAG", repeatable: true, .text, help: "a tag")
    static let table = OptionTable([verbose, count, tag])

    static func parse(_ arguments: [String]) throws(UsageError) -> Arguments {
        try Arguments(arguments, table: table, command: "try")
    }

    @Test func flagsValuesAndPositionalArguments() throws {
        let parsed = try Self.parse(["a", "-v", "--count", "3", "--tag=x", "b", "--tag", "y", "-", "--", "--count", "-v"])
        #expect(parsed.contains(Self.verbose))
        #expect(try parsed.value(Self.count) == 3)
        #expect(try parsed.values(Self.tag) == ["x", "y"])
        #expect(parsed.text(Self.tag) == "y", "an option given twice counts the last time")
        #expect(parsed.positional == ["a", "b", "-", "--count", "-v"], "- is stdin; -- ends the options")
        let long = try Self.parse(["--verbose", "--count=2", "--count", "4"])
        #expect(long.contains(Self.verbose) && long.contains(Self.count) && !long.contains(Self.tag))
        #expect(try long.value(Self.count) == 4)
        let none = try Self.parse([])
        #expect(try !none.contains(Self.verbose) && none.text(Self.count) == nil && none.values(Self.tag).isEmpty)
        #expect(try Self.parse(["-h"]).contains(CommonOptions.help) && Self.parse(["--help"]).contains(CommonOptions.help))
    }

    @Test func mistakesAreUsageErrorsThatSayWhatToDo() {
        #expect(throws: UsageError(message: "unknown option '--cuont' for 'try'", hint: "did you mean '--count'?")) {
            try Self.parse(["--cuont", "3"])
        }
        #expect(throws: UsageError(message: "unknown option '--colour' for 'try'", hint: "see 'feedingest try --help'")) {
            try Self.parse(["--colour"])
        }
        #expect(throws: UsageError(message: "--verbose takes no value", hint: nil)) { try Self.parse(["--verbose=yes"]) }
        #expect(throws: UsageError(message: "--count needs a value", hint: nil)) { try Self.parse(["--count"]) }
        // A bad value is the option's to say, when it is read.
        #expect(throws: UsageError(message: "--count needs a number from 1 to 9, not '10'", hint: nil)) {
            try Self.parse(["--count", "10"]).value(Self.count)
        }
        #expect(throws: UsageError(message: "--count needs a number from 1 to 9, not 'x'", hint: nil)) {
            try Self.parse(["--count", "x", "--count", "2"]).values(Self.count)
        }
    }

    @Test func theTableKnowsEveryNameAndEndsWithHelp() {
        #expect(Self.table.names == ["--count", "--help", "--tag", "--verbose", "-h", "-v"])
        #expect(Self.table.option(named: "-v") == Self.verbose.option)
        #expect(Self.table.option(named: "--verbose") == Self.verbose.option)
        #expect(Self.table.option(named: "--nope") == nil)
        #expect(Self.table.options.last == CommonOptions.help.option)
        #expect(Self.table.contains(Self.count.option) && !Self.table.contains(IngestCommand.jobs.option))
        #expect(OptionTable([Self.verbose, CommonOptions.help]).options.count == 2, "help listed once")
    }

    @Test func theOptionsSectionAlignsWrapsAndSaysWhatRepeats() {
        let long = ValueOption<String>("--a-long-option", "NAME", .text, help: "a label too wide for the column")
        let wordy = Flag("--wordy", help: String(repeating: "word ", count: 40))
        let table = OptionTable([Self.verbose, Self.tag, long, wordy])
        let lines = table.help().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "  -v, --verbose     say more")
        #expect(lines[1] == "  --tag TAG         a tag (repeatable)")
        #expect(lines[2] == "  --a-long-option NAME")
        #expect(lines[3] == String(repeating: " ", count: 20) + "a label too wide for the column")
        #expect(lines[4].hasPrefix("  --wordy           word word"))
        #expect(lines[5].hasPrefix(String(repeating: " ", count: 20) + "word"))
        #expect(lines.allSatisfy { $0.count <= OptionTable.helpWidth }, "\(lines)")
        #expect(lines.last == "  -h, --help        show this help")
        #expect(table.help([Self.tag]) == "  --tag TAG         a tag (repeatable)")
    }

    @Test func conversionsCheckTheirValues() throws {
        func convert<Value>(_ conversion: Conversion<Value>, _ text: String) throws(UsageError) -> Value {
            try conversion.convert(text, "--x")
        }
        #expect(try convert(.interval, "15m") == 900 && convert(.interval, "0") == 0 && convert(.interval, "1.5h") == 5_400)
        #expect(throws: UsageError(message: "--x needs a duration (0, 90s, 15m, 1h, 1d), not '367d'", hint: nil)) { try convert(.interval, "367d") }
        #expect(throws: UsageError.self) { try convert(.interval, "-1") }
        #expect(try convert(.size("a size"), "512k") == 524_288 && convert(.size("a size"), "64M") == 64 << 20)
        #expect(throws: UsageError(message: "--x needs a size, not '0'", hint: nil)) { try convert(.size("a size"), "0") }
        #expect(try convert(.size("a rate", allowsRate: true), "2M/s") == 2 << 20)
        #expect(throws: UsageError.self) { try convert(.size("a size", atLeast: 4096), "4000") }
        #expect(try convert(.count(of: "files", atLeast: 1), "3") == 3)
        #expect(throws: UsageError(message: "--x needs a number of files (1 or more), not '0'", hint: nil)) {
            try convert(.count(of: "files", atLeast: 1), "0")
        }
        #expect(try convert(.days, "1.5") == 1.5)
        #expect(throws: UsageError.self) { try convert(.days, "inf") }
        #expect(try convert(.oneLine, "agent/1") == "agent/1")
        #expect(throws: UsageError(message: "--x needs a one-line value", hint: nil)) { try convert(.oneLine, "a\nb") }
        #expect(throws: UsageError.self) { try convert(.oneLine, "a\rb") }
        #expect(throws: UsageError.self) { try convert(.oneLine, "") }
        #expect(try convert(.mediaTypes, " audio/* , video/mp4,") == ["audio/*", "video/mp4"])
        #expect(throws: UsageError(message: "--x needs media types like audio/*,video/mp4, not 'audio'", hint: nil)) {
            try convert(.mediaTypes, "audio")
        }
        #expect(try convert(.date, "2026-05-01T08:30:00Z") == Date(timeIntervalSince1970: 1_777_624_200))
        #expect(throws: UsageError(message: "--x needs a date, not 'soon'", hint: "for example 2026-05-01, 2026-05-01T08:30Z, yesterday or 12h")) {
            try convert(.date, "soon")
        }
        #expect(try convert(.naming, "{feed}/{title}.{ext}").template == "{feed}/{title}.{ext}")
        #expect(throws: UsageError.self) { try convert(.naming, "{nope}") }
    }
}
