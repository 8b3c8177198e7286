import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One HTTP/1.1 exchange over a plain blocking socket, for what URLSession hides: when the status
/// line arrived, and whether a body ended cleanly at its `Content-Length` or the connection was cut
/// short of it. Every blocking call runs on a Dispatch thread, never on the cooperative pool.
final class RawHTTPConnection: Sendable {
    let descriptor: Int32

    /// How reading the rest of a body ended.
    enum Ending: String, Sendable {
        case closed, reset, timedOut
    }

    struct Head: Sendable {
        let status: Int
        let headers: [String: String]
        /// Body bytes that arrived with the head.
        let bodyBytes: Int
        var contentLength: Int? { headers["content-length"].flatMap { Int($0) } }
    }

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// Connects to `127.0.0.1:port` with a small receive buffer (so the server is held back by
    /// back-pressure while the test does not read) and sends `GET path` with `headers`.
    static func get(port: Int, path: String, headers: [String: String]) async throws -> RawHTTPConnection {
        try await offPool {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw TestSupportError("socket failed: errno \(errno)") }
            let connection = RawHTTPConnection(descriptor: descriptor)
            var size: Int32 = 32 * 1024
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw TestSupportError("connect failed: errno \(errno)") }
            let lines = ["GET \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Connection: close"] + headers.map { "\($0.key): \($0.value)" }
            let request = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
            var sent = 0
            while sent < request.count {
                let n = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { throw TestSupportError("send failed: errno \(errno)") }
                sent += n
            }
            return connection
        }
    }

    /// Reads until the head and at least one body byte have arrived.
    func readHead() async throws -> Head {
        try await Self.offPool { [descriptor] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            while true {
                if let end = received.indices.first(where: { received[$0...].starts(with: separator) }), received.count > end + 4 {
                    let text = String(decoding: received[..<end], as: UTF8.self)
                    let lines = text.components(separatedBy: "\r\n")
                    let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
                    var headers: [String: String] = [:]
                    for line in lines.dropFirst() {
                        guard let colon = line.firstIndex(of: ":") else { continue }
                        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    }
                    return Head(status: status, headers: headers, bodyBytes: received.count - end - 4)
                }
                let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { throw TestSupportError("the connection ended before a head and a body byte: \(n), errno \(errno)") }
                received += buffer[..<n]
            }
        }
    }

    /// Reads what is left; how many bytes, and how the stream ended.
    func readToEnd() async throws -> (bytes: Int, ending: Ending) {
        try await Self.offPool { [descriptor] in
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var total = 0
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    total += n
                } else if n == 0 {
                    return (total, .closed)
                } else if errno == ECONNRESET {
                    return (total, .reset)
                } else if errno == EAGAIN || errno == EWOULDBLOCK {
                    return (total, .timedOut)
                } else if errno != EINTR {
                    throw TestSupportError("recv failed: errno \(errno)")
                }
            }
        }
    }

    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
        }
    }
}
