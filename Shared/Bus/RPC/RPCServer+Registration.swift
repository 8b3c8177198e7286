import Foundation
import Locks
import Metrics

/// Registration: a method's handler wrapped once, with its counters and its retry digest, so a
/// request pays for none of it.
extension RPCServer {
    /// A handler and its success counter, made once at registration rather than per request.
    /// The handler returns its payload's JSON as bytes: typed handlers encode straight into them.
    /// `nonisolated(nonsending)`: it runs on the executor of the request's task with no switch of
    /// its own (each switch looked up the task's preferred executor under its status lock); the
    /// service's own handler, which it calls, runs where its type says. A class: a request hands
    /// it on four or five times (admission, its run, the run's task), one reference count each
    /// rather than one per member.
    final class Registered: Sendable {
        typealias Handler =
            nonisolated(nonsending) @Sendable (Envelope, BusRequestContext) async throws -> (
                payload: [UInt8]?, attachments: [Data]
            )
        let handler: Handler
        let succeeded: Counter
        /// From the request's arrival on the socket thread to its handler's outcome: the handler's
        /// run and its wait for a thread (`bus_rpc_handle_seconds`).
        let duration: Timer
        /// Whether replies are kept to answer a retry with the same key (``RPCMethod/cachesReply``).
        let cachesReply: Bool
        /// The digest that tells a retry from another request under the same key.
        let digest: @Sendable (Envelope, [Data]) -> Int

        init(
            handler: @escaping Handler, succeeded: Counter, duration: Timer, cachesReply: Bool,
            digest: @escaping @Sendable (Envelope, [Data]) -> Int
        ) {
            self.handler = handler
            self.succeeded = succeeded
            self.duration = duration
            self.cachesReply = cachesReply
            self.digest = digest
        }

        /// The digest of requests whose type says nothing of which members make a retry the same.
        static let payloadDigest: @Sendable (Envelope, [Data]) -> Int = {
            IdempotencyKeyRule.digest(payload: $0.payload, attachments: $1)
        }
    }

    /// Registers the handler of one method. Register every method before ``start()``.
    public func register<M: RPCMethod>(
        _ method: M.Type, _ handler: @escaping @Sendable (M.Request, BusRequestContext) async throws -> M.Reply
    ) {
        register(method) { request, context in (try await handler(request, context), []) }
    }

    /// Registers a handler whose reply carries binary attachments (document chunks).
    public func register<M: RPCMethod>(
        _ method: M.Type,
        withAttachments handler: @escaping @Sendable (M.Request, BusRequestContext) async throws -> (M.Reply, [Data])
    ) {
        var digest = Registered.payloadDigest
        if M.cachesReply, M.Request.self is any IdempotencyFingerprinted.Type {
            digest = { envelope, attachments in
                guard let request = try? envelope.decodePayload(M.Request.self), let fingerprinted = request as? any IdempotencyFingerprinted
                else {
                    return IdempotencyKeyRule.digest(payload: envelope.payload, attachments: attachments)
                }
                var hasher = Hasher()
                fingerprinted.hashFingerprint(into: &hasher)
                return hasher.finalize()
            }
        }
        register(M.type, cachesReply: M.cachesReply, digest: digest) { envelope, context in
            let request = try envelope.decodePayload(M.Request.self)
            let (reply, attachments) = try await handler(request, context)
            return (try BusJSON.encodeBytes(reply), attachments)
        }
    }

    /// Registers a handler that works on the envelope itself (generic tooling, proxies). Its
    /// replies are kept for retries only when it says so.
    public func registerRaw(_ type: String, cachesReply: Bool = false, _ handler: @escaping RawHandler) {
        register(type, cachesReply: cachesReply) { envelope, context in
            let (payload, attachments) = try await handler(envelope, context)
            return (payload.map { [UInt8]($0) }, attachments)
        }
    }

    private func register(
        _ type: String, cachesReply: Bool, digest: @escaping @Sendable (Envelope, [Data]) -> Int = Registered.payloadDigest,
        _ handler: @escaping Registered.Handler
    ) {
        let succeeded = Counter(label: "bus_rpc_handled_total", dimensions: [("server", name), ("type", type), ("code", "ok")])
        let duration = Timer(label: "bus_rpc_handle_seconds", dimensions: [("server", name), ("type", type)])
        handlers.withLock {
            $0[type] = Registered(
                handler: handler, succeeded: succeeded, duration: duration, cachesReply: cachesReply, digest: digest)
        }
    }
}
