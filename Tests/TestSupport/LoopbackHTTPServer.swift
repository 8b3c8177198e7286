import Foundation
import Locks

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One HTTP request as ``LoopbackHTTPServer`` received it.
public struct LoopbackHTTPRequest: Sendable {
    public var method: String
    public var path: String
    public var headers: [String: String]
    public var body: Data

    /// The body as `application/x-www-form-urlencoded` fields (last value wins).
    public var formFields: [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}

/// A minimal HTTP/1.1 server on 127.0.0.1 for stand-ins of external services (Apple) in tests:
/// POSIX sockets, one thread that accepts and answers each connection in turn (`Connection:
/// close`), never on the cooperative pool. Requests need a `Content-Length` body or none.
public final class LoopbackHTTPServer: Sendable {
    public typealias Handler = @Sendable (LoopbackHTTPRequest) -> (status: Int, body: Data)

    public let port: Int
    private let listener: Int32
    private let flag = StopFlag()

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public init(handler: @escaping Handler) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let flag = self.flag
        // The listening descriptor is closed by this thread only, once it stops accepting: its
        // number cannot be reused by another socket (and then accepted on) while the thread lives.
        Thread {
            while !flag.stopped.withLock({ $0 }) {
                let connection = accept(fd, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    break  // shut down by stop() (EINVAL), or unusable
                }
                if !flag.stopped.withLock({ $0 }) { Self.serve(connection, handler) }
                close(connection)
            }
            close(fd)
        }.start()
    }

    /// Stops accepting: `shutdown` wakes the accepting thread, which closes the socket and ends.
    public func stop() {
        guard
            !flag.stopped.withLock({
                let was = $0
                $0 = true
                return was
            })
        else { return }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    deinit { stop() }

    private static func serve(_ connection: Int32, _ handler: Handler) {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var request: LoopbackHTTPRequest?
        while request == nil {
            let count = read(connection, &buffer, buffer.count)
            if count <= 0 { return }
            received.append(contentsOf: buffer[0..<count])
            request = parse(received)
        }
        guard let request else { return }
        let (status, body) = handler(request)
        var response = Data("HTTP/1.1 \(status) \(status == 200 ? "OK" : "Error")\r\nContent-Type: application/json\r\n".utf8)
        response.append(Data("Content-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8))
        response.append(body)
        response.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(connection, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// A complete request in `data`, or nil while more bytes are needed.
    private static func parse(_ data: Data) -> LoopbackHTTPRequest? {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let start = head[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let body = data[end.upperBound...]
        guard body.count >= length else { return nil }
        return LoopbackHTTPRequest(
            method: start.first.map(String.init) ?? "", path: start.count > 1 ? String(start[1]) : "", headers: headers,
            body: Data(body.prefix(length)))
    }
}

/// Set once the server stops, read by its accepting thread.
private final class StopFlag: Sendable {
    let stopped = LockedValue(false)
}
