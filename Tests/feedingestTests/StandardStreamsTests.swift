@testable import feedingest
import Foundation
import Testing

/// The command's buffered streams are written from several threads during an ingest (the observers' event queue
/// and the signal handler's queue both write standard error): every line must arrive whole, in each writer's order.
@Suite("Standard streams")
struct StandardStreamsTests {
    /// Many threads write lines at once into one stream over a real pipe, which a reader drains meanwhile; every
    /// line must come out intact. An unguarded buffer appended to and written from two threads at once loses,
    /// garbles or duplicates lines, or crashes.
    @Test(arguments: [1, 64 * 1024])  // standard error's capacity (every write flushed) and standard output's
    func concurrentWritersKeepEveryLineWhole(capacity: Int) throws {
        var descriptors: [Int32] = [0, 0]
        try #require(pipe(&descriptors) == 0)
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        defer { close(readEnd) }

        final class Collected: @unchecked Sendable {  // written by the reader thread only, read after it is joined
            var bytes: [UInt8] = []
        }
        let collected = Collected()
        let readerDone = DispatchSemaphore(value: 0)
        Thread {
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                collected.bytes.append(contentsOf: chunk[0..<count])
            }
            readerDone.signal()
        }.start()

        let stream = feedingest.OutputStream(descriptor: writeEnd, capacity: capacity)
        let writers = 8, linesEach = 2_000
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for line in 0..<linesEach {
                // Lines of different lengths, so a torn write shows as a malformed line.
                stream.write("writer \(writer) line \(line) " + String(repeating: "x", count: (writer * 31 + line) % 97) + " end\n")
            }
        }
        stream.flush()
        close(writeEnd)
        readerDone.wait()

        let lines = String(decoding: collected.bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "", "the output ends with a whole line")
        var next = [Int](repeating: 0, count: writers)
        var malformed = 0
        for line in lines.dropLast() {
            let parts = line.split(separator: " ")
            guard parts.count == 6 || parts.count == 5, parts[0] == "writer", parts[2] == "line", parts.last == "end",
                  let writer = Int(parts[1]), let number = Int(parts[3]), (0..<writers).contains(writer),
                  line == "writer \(writer) line \(number) " + String(repeating: "x", count: (writer * 31 + number) % 97) + " end"
            else {
                malformed += 1
                continue
            }
            #expect(number == next[writer], "writer \(writer)'s lines arrive in order")
            next[writer] = number + 1
        }
        #expect(malformed == 0)
        #expect(next == [Int](repeating: linesEach, count: writers), "every line of every writer arrived")
    }
}
