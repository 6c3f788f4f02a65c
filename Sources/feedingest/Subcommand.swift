/// What a command line asks of a subcommand: its help, or a run with a configuration.
enum Invocation<Configuration> {
    case help
    case run(Configuration)
}

/// A subcommand of `feedingest`: its options as a table, its help, the pure reading of its command line into a
/// configuration, and the run that does the work with it.
///
/// ``main(_:)`` reads: options → configuration → ``run(_:)``. Everything up to the configuration is checked before any
/// I/O, so a usage error leaves no trace but its message (exit status 2).
protocol Subcommand {
    associatedtype Configuration

    /// Its name on the command line, as usage errors say it.
    static var name: String { get }
    /// Its options, in help order.
    static var options: OptionTable { get }
    /// Its help, whose Options section ``options`` writes.
    static var help: String { get }

    /// The configuration a command line read against ``options`` asks for, or the usage error it makes. No I/O.
    static func configuration(_ arguments: Arguments) throws(UsageError) -> Configuration

    /// Does the work the configuration describes; returns the exit status.
    static func run(_ configuration: Configuration) -> Int32
}

extension Subcommand {
    /// What `arguments` (the words after the subcommand's name) ask for: the help (`-h`, `--help`), or a run with its
    /// configuration; or the usage error they make.
    static func parse(_ arguments: [String]) -> Result<Invocation<Configuration>, UsageError> {
        do throws(UsageError) {
            let parsed = try Arguments(arguments, table: options, command: name)
            if parsed.contains(CommonOptions.help) { return .success(.help) }
            return .success(.run(try configuration(parsed)))
        } catch {
            return .failure(error)
        }
    }

    /// Runs the subcommand for `arguments`: prints its help, or its usage error, or runs it; returns the exit status.
    static func main(_ arguments: [String]) -> Int32 {
        switch parse(arguments) {
        case .failure(let error):
            return Command.usageError(error)
        case .success(.help):
            StandardStreams.output.write(help + "\n")
            StandardStreams.output.flush()
            return 0
        case .success(.run(let configuration)):
            return run(configuration)
        }
    }
}
