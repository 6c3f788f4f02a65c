import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// TCP on 127.0.0.1, independent of the code under test: free ports, whether a port listens, and a plain blocking
/// GET for servers' control requests. Nothing here ever addresses anything but 127.0.0.1.
public enum Loopback {
    /// The only address the test servers listen on.
    public static let host = "127.0.0.1"

    /// `http://127.0.0.1:<port><path>`; `path` starts with `/`.
    public static func url(port: Int, _ path: String, scheme: String = "http") -> URL {
        URL(string: "\(scheme)://\(host):\(port)\(path)")!
    }

    /// A port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, released).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = loopbackAddress(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestSupportError("bind() to 127.0.0.1 failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func isListening(port: Int) -> Bool {
        guard let fd = try? connected(port: port) else { return false }
        close(fd)
        return true
    }

    /// A plain blocking `GET` over its own connection (`Connection: close`): the response's status and body.
    public static func get(port: Int, _ path: String) throws -> (status: Int, body: Data) {
        let fd = try connected(port: port)
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw TestSupportError("send() to 127.0.0.1:\(port) failed: errno \(errno)")
        }
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        guard let end = response.range(of: Data("\r\n\r\n".utf8)) else {
            throw TestSupportError("no HTTP response to GET \(path) on 127.0.0.1:\(port)")
        }
        let statusLine = String(decoding: response[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n").first ?? ""
        let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        // Control responses carry a Content-Length and close; chunked bodies are not expected here.
        return (status, Data(response[end.upperBound...]))
    }

    private static func loopbackAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        return address
    }

    /// A socket connected to 127.0.0.1:`port`.
    private static func connected(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket() failed: errno \(errno)") }
        var address = loopbackAddress(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw TestSupportError("cannot connect to 127.0.0.1:\(port): errno \(code)")
        }
        return fd
    }
}
