@testable import feedingest

/// What a test wants of a subcommand's pure parse: the configuration a command line makes, or its usage error.
extension Subcommand {
    /// The configuration `arguments` make; throws their usage error, or `HelpAsked` for `--help`.
    static func configuration(_ arguments: [String]) throws -> Configuration {
        switch parse(arguments) {
        case .success(.run(let configuration)): return configuration
        case .success(.help): throw HelpAsked()
        case .failure(let error): throw error
        }
    }

    /// The usage error `arguments` make, if any.
    static func usageError(_ arguments: [String]) -> UsageError? {
        guard case .failure(let error) = parse(arguments) else { return nil }
        return error
    }
}

/// `--help` was asked for instead of a run.
struct HelpAsked: Error {}
