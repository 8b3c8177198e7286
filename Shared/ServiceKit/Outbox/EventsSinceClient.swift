import Bus
import Contracts

extension RPCClient {
    /// One page of `publisher`'s events after sequence `after` (`<publisher>.events.since`), as the
    /// envelopes were published, and the highest sequence published so far. Retried with its key
    /// until the call's deadline, like any idempotent read. The catch-up path of every follower.
    public func events(
        of publisher: String, after: Int64, limit: Int = 500, principal: Principal, timeout: Duration? = nil
    ) async throws -> (events: [Envelope], latestSequence: Int64) {
        let request = Envelope(
            kind: .request, type: EventsSince.type(for: publisher), principal: principal,
            payload: try BusJSON.encode(EventsSince.Request(after: after, limit: limit)))
        let (reply, attachments) = try await send(request, timeout: timeout, retry: true)
        if let error = reply.error { throw error }
        let page = try reply.decodePayload(EventsSince.Reply.self)
        return (try attachments.map { try EnvelopeCodec.decode($0) }, page.latestSequence)
    }
}
