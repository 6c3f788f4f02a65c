import Foundation
import TestSupport

/// Runs the built `feedingest` binary as a user would, with real pipes, and collects what it printed.
struct CommandRunner {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
    }

    /// The binary sits next to the test bundle in the build directory (`swift build --build-tests` builds it).
    static let binary: URL = Paths.builtExecutable("feedingest") ?? Paths.packageRoot.appendingPathComponent(".build/debug/feedingest")

    static func run(_ arguments: [String], stdin: Data? = nil, currentDirectory: URL? = nil, environment: [String: String]? = nil) throws -> Result {
        let finished = try ChildProcess.run(binary.path, arguments, standardInput: stdin, environment: environment,
                                            currentDirectory: currentDirectory)
        return Result(status: finished.status, stdout: finished.standardOutput, stderr: finished.standardError)
    }
}

/// Validates JSON with the independent Python `jsonschema` package (installed by `make setup`).
func validate(_ json: String, schema: String, lines: Bool) throws -> (ok: Bool, output: String) {
    let directory = try Paths.temporaryDirectory("feedingest-cli")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("data.json")
    try Data(json.utf8).write(to: file)
    let finished = try ChildProcess.run("/usr/bin/env", ["python3", Paths.script("validate_json.py").path, Paths.schema(schema).path,
                                                         file.path] + (lines ? ["--lines"] : []))
    return (finished.status == 0, finished.standardOutput + finished.standardError)
}
