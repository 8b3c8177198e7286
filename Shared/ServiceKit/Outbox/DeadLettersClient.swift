import Bus
import Contracts

extension RPCClient {
    /// `service`'s dead letters (`<service>.events.dead-letters`), oldest first.
    public func deadLetters(of service: String, includeRetried: Bool = false, principal: Principal) async throws -> [DeadLetters.Letter] {
        let reply = try await deadLettersCall(
            DeadLetters.listType(for: service), DeadLetters.ListRequest(includeRetried: includeRetried), principal: principal, retry: true)
        return try reply.decodePayload(DeadLetters.ListReply.self).letters
    }

    /// Applies `service`'s dead letter from `publisher` number `sequence` again
    /// (`<service>.events.dead-letters.retry`); fails with the handler's error if it fails again.
    public func retryDeadLetter(of service: String, publisher: String, sequence: Int64, principal: Principal) async throws -> DeadLetters.Letter {
        let reply = try await deadLettersCall(
            DeadLetters.retryType(for: service), DeadLetters.RetryRequest(publisher: publisher, sequence: sequence), principal: principal,
            retry: false)
        return try reply.decodePayload(DeadLetters.RetryReply.self).letter
    }

    private func deadLettersCall(_ type: String, _ request: some Encodable, principal: Principal, retry: Bool) async throws -> Envelope {
        let envelope = Envelope(kind: .request, type: type, principal: principal, payload: try BusJSON.encode(request))
        let (reply, _) = try await send(envelope, timeout: nil, retry: retry)
        if let error = reply.error { throw error }
        return reply
    }
}
