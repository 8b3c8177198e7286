import Bus
import Foundation

/// Request/reply types the bus tests and the `BusTestPeer` process share.
public struct EchoRequest: Codable, Sendable, Equatable {
    public var number: Int
    public var text: String
    /// How long the handler waits before answering, to make replies overtake each other.
    public var delayMs: Int
    public init(number: Int, text: String = "", delayMs: Int = 0) {
        self.number = number
        self.text = text
        self.delayMs = delayMs
    }
}

public struct EchoReply: Codable, Sendable, Equatable {
    public var number: Int
    public var text: String
    public var principal: String
    public var peer: String?
}

public enum TestEcho: RPCMethod {
    public typealias Request = EchoRequest
    public typealias Reply = EchoReply
    public static let type = "test.echo"
    public static let cachesReply = false
}

/// Like echo, but idempotent: the client retries it and the server runs it once per key.
public enum TestCountedEcho: RPCMethod {
    public typealias Request = EchoRequest
    public typealias Reply = EchoReply
    public static let type = "test.counted"
    public static let isIdempotent = true
    public static let cachesReply = true
}

/// Like echo, idempotent but not remembered (a read): the client retries it, and every call runs.
public enum TestCountedRead: RPCMethod {
    public typealias Request = EchoRequest
    public typealias Reply = EchoReply
    public static let type = "test.counted-read"
    public static let isIdempotent = true
    public static let cachesReply = false
}

/// Replies with the attachments it got, reversed, so attachment round trips can be checked.
public enum TestAttachments: RPCMethod {
    public typealias Request = Empty
    public typealias Reply = Empty
    public static let type = "test.attachments"
    public static let cachesReply = false
}

/// Registers the test handlers; `executions` counts runs of ``TestCountedEcho`` and ``TestCountedRead``.
public func registerTestHandlers(on server: RPCServer, executions: @escaping @Sendable () -> Void = {}) {
    let echo: @Sendable (EchoRequest, BusRequestContext) async throws -> EchoReply = { request, context in
        if request.delayMs > 0 { try await Task.sleep(for: .milliseconds(request.delayMs)) }
        return EchoReply(number: request.number, text: request.text, principal: context.principal.description, peer: context.peer)
    }
    server.register(TestEcho.self, echo)
    server.register(TestCountedEcho.self) { request, context in
        executions()
        return try await echo(request, context)
    }
    server.register(TestCountedRead.self) { request, context in
        executions()
        return try await echo(request, context)
    }
    server.register(TestAttachments.self, withAttachments: { _, context in (Empty(), context.attachments.reversed()) })
}
