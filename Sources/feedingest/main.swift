import Foundation

/// The `feedingest` command: dispatches to its subcommands.
enum Command {
    static let version = "0.1.0"

    static let help = """
        feedingest \(version): ingest RSS and Atom feeds as a stream.

        Usage:
          feedingest parse [options] FILE...    articles of feed files as NDJSON (no store)
          feedingest --version                  print the version
          feedingest --help                     show this help

        Run 'feedingest COMMAND --help' for a command's options.
        Fetching feed lists into a store ('feedingest FEEDS') is not available yet.
        """

    static func usageError(_ error: Arguments.UsageError) -> Int32 {
        var line = "feedingest: \(error.message)"
        if let hint = error.hint { line += " (\(hint))" }
        StandardStreams.error.write(line + "\n")
        return 2
    }

    static func main(_ arguments: [String]) -> Int32 {
        OutputStream.ignoreBrokenPipes()
        guard let first = arguments.first else {
            StandardStreams.error.write(help + "\n")
            return 2
        }
        switch first {
        case "parse":
            return ParseCommand.run(Array(arguments.dropFirst()))
        case "--help", "-h", "help":
            StandardStreams.output.write(help + "\n")
            StandardStreams.output.flush()
            return 0
        case "--version", "-V":
            StandardStreams.output.write("feedingest \(version)\n")
            StandardStreams.output.flush()
            return 0
        default:
            if first.hasPrefix("-") {
                let suggestion = Arguments.closest(to: first, in: ["--help", "--version"])
                return usageError(.init(message: "unknown option '\(first)'", hint: suggestion.map { "did you mean '\($0)'?" } ?? "see 'feedingest --help'"))
            }
            let suggestion = Arguments.closest(to: first, in: ["parse", "help"])
            if let suggestion {
                return usageError(.init(message: "unknown command '\(first)'", hint: "did you mean '\(suggestion)'?"))
            }
            return usageError(.init(message: "fetching feed lists is not available yet; use 'feedingest parse FILE...'",
                                    hint: "see 'feedingest --help'"))
        }
    }
}

exit(Command.main(Array(CommandLine.arguments.dropFirst())))
