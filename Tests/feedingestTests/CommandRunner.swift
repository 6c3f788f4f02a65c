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
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let output = Pipe(), error = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = input
        try process.run()
        // Read both pipes while the process runs, so a large output cannot block it.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = output.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = error.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// Validates JSON with the independent Python `jsonschema` package (installed by `make setup`).
func validate(_ json: String, schema: String, lines: Bool) throws -> (ok: Bool, output: String) {
    let directory = try Paths.temporaryDirectory("feedingest-cli")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("data.json")
    try Data(json.utf8).write(to: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", Paths.script("validate_json.py").path, Paths.schema(schema).path, file.path] + (lines ? ["--lines"] : [])
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus == 0, String(decoding: data, as: UTF8.self))
}
