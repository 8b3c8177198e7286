import Foundation
import SystemCall

@testable import ServiceKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A blocking HTTP/1.1 client on plain sockets for talking to the health server in tests. Every
/// blocking call runs on a fresh `Thread`, never on the cooperative pool (which the server's
/// readiness poller needs).
enum RawHTTPClient {
    struct Response: Sendable {
        var status: Int
        /// Header names lower-cased.
        var headers: [String: String]
        var body: String
    }

    struct ClientError: Error, CustomStringConvertible {
        var description: String
    }

    /// One request on its own connection, which the client asks the server to close after the answer.
    static func get(_ path: String, port: Int, method: String = "GET") async throws -> Response {
        try await send(Array("\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8), port: port)
    }

    /// Sends `request` as is, then reads until the server closes.
    static func send(_ request: [UInt8], port: Int) async throws -> Response {
        try await onThread {
            let descriptor = try connect(port: port)
            defer { close(descriptor) }
            try writeAll(request, to: descriptor)
            return try parse(readToEnd(descriptor))
        }
    }

    /// A connected socket with a receive timeout (30 s unless given); the caller closes it. The
    /// timeout is a guard against a hang, not a bound on the server: at 5 s, five tests of a
    /// fresh clone's run failed `read: EAGAIN` in the test run's busiest first minute.
    static func connect(port: Int, receiveTimeoutSeconds: Int = 30) throws -> Int32 {
        let descriptor = try systemCall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0) }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        do {
            _ = try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    try systemCall("connect") { Glibc.connect(descriptor, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws {
        var sent = 0
        while sent < bytes.count {
            sent += try bytes.withUnsafeBytes { buffer in
                try systemCall("send") {
                    Glibc.send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                }
            }
        }
    }

    /// Whether a read would not wait now (bytes, end of stream or an error are there): `poll`
    /// with no timeout.
    static func isReadable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }

    /// Everything until end of stream (or the receive timeout, which throws).
    static func readToEnd(_ descriptor: Int32) throws -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                try systemCall("read") { read(descriptor, buffer.baseAddress!, buffer.count) }
            }
            if count == 0 { return received }
            received += chunk[..<count]
        }
    }

    /// Reads until the end of a response head (the blank line), leaving the connection open.
    static func readHead(_ descriptor: Int32) throws {
        var received: [UInt8] = []
        var byte: UInt8 = 0
        while !received.suffix(4).elementsEqual([13, 10, 13, 10]) {
            let count = try systemCall("read") { read(descriptor, &byte, 1) }
            guard count == 1 else { throw ClientError(description: "closed before the end of the response head") }
            received.append(byte)
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> Response {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw ClientError(description: "no header end in \(text)") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw ClientError(description: "bad status line \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, headers: headers, body: String(text[split.upperBound...]))
    }

    /// Runs blocking `body` on its own thread and awaits its result.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Whether a TCP connection to `port` on loopback is refused (nothing listening).
    static func isRefused(port: Int) async throws -> Bool {
        try await onThread {
            do {
                close(try connect(port: port))
                return false
            } catch let error as SystemCallError where error.errorNumber == ECONNREFUSED {
                return true
            }
        }
    }
}
