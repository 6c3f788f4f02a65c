// Reading a file in chunks, so a parser of any size of file keeps its memory flat: the one place it is done.
import Foundation

/// Why a file could not be read: a message naming the path, for the caller's own error.
public struct FileReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// `"PATH does not exist"`, `"PATH cannot be read"`, `"reading PATH failed: why"`.
    public var message: String

    public var description: String { message }
}

/// Reads files in chunks for the parsers' `parse(contentsOfFile:)`.
public enum FileChunks {
    /// Hands the file at `path` to `body` in chunks of at most `chunkSize` bytes, in order; a file that cannot be
    /// opened or read becomes the caller's error through `failure`.
    public static func read<Failure: Error>(path: String, chunkSize: Int = 64 * 1024,
                                            failure: (FileReadError) -> Failure,
                                            _ body: (Data) throws(Failure) -> Void) throws(Failure) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw failure(FileReadError(path: path, message: "\(path) \(reason)"))
        }
        defer { try? handle.close() }
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: max(1, chunkSize)) } catch {
                throw failure(FileReadError(path: path, message: "reading \(path) failed: \(error.localizedDescription)"))
            }
            guard let chunk, !chunk.isEmpty else { return }
            try body(chunk)
        }
    }
}
