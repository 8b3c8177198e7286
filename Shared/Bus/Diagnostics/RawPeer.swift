import Foundation
import Locks
import Logging

/// A DEALER socket that sends frames exactly as given, garbage included, and hands back whatever
/// comes: what the hostile-input and malformed-message tests of the bus and of every service
/// speak to a server with. `package`, not public: no product uses it; it lives here, beside the
/// socket loop it drives, so that the test targets share one copy.
package final class RawPeer: Sendable {
    private let loop: SocketLoop
    private let inbox: AsyncStream<[Data]>
    private let iterator: LockedValue<AsyncStream<[Data]>.AsyncIterator?>

    private init(loop: SocketLoop, inbox: AsyncStream<[Data]>) {
        self.loop = loop
        self.inbox = inbox
        self.iterator = LockedValue(nil)
    }

    package static func connect(_ endpoint: String, maxMessageSize: Int64 = -1, logger: Logger) async throws -> RawPeer {
        let (stream, continuation) = AsyncStream.makeStream(of: [Data].self)
        let loop = try await SocketLoop.start(
            name: "raw", policy: .wait, logger: logger,
            callbacks: LoopCallbacks(onMessage: { continuation.yield($0.frames) })
        ) { sockets in
            let socket = try sockets.makeMain(.dealer)
            try socket.limitMessageSize(maxMessageSize)
            try socket.connect(endpoint)
        }
        return RawPeer(loop: loop, inbox: stream)
    }

    package func send(_ frames: [Data]) { loop.send(OutgoingMessage(frames: frames, expiresAt: nil)) }

    /// Sends `frames` and waits (up to `timeout`) for the next message back.
    package func roundTrip(_ frames: [Data], timeout: Duration = .seconds(5)) async throws -> [Data] {
        send(frames)
        return try await next(timeout: timeout)
    }

    /// Waits for the next message. A timeout ends the stream (a cancelled `next()` finishes an
    /// `AsyncStream`), so only a test's last read may expect one.
    package func next(timeout: Duration = .seconds(5)) async throws -> [Data] {
        let inbox = self.inbox
        return try await withThrowingTaskGroup(of: [Data]?.self) { group in
            group.addTask {
                var iterator = inbox.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let frames = first else { throw RawPeerTimeout() }
            return frames
        }
    }

    package func close() async { await loop.stop() }
}

/// No message came within the time given to ``RawPeer/next(timeout:)``.
package struct RawPeerTimeout: Error {}
