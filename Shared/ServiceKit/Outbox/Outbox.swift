import Bus
import Foundation
import Locks
import Postgres

/// Writes events into a service's outbox inside the caller's transaction, so an event exists if
/// and only if the state change it announces committed. A rolled-back transaction leaves no event.
///
/// ```swift
/// try await pool.withTransaction { db in
///     try db.execute("UPDATE …", …)
///     try outbox.append(type: "legal.published", payload, on: db)
/// }
/// outbox.committed()   // publish now rather than at the relay's next poll
/// ```
public final class Outbox: Sendable {
    public let schema: String
    private let insert: String
    private let wakeRelay = LockedValue<(@Sendable () -> Void)?>(nil)

    public init(schema: String) {
        self.schema = OutboxSchema.validated(schema)
        insert = "INSERT INTO \(schema).outbox (type, payload) VALUES ($1, $2)"
    }

    /// Adds an event to the outbox in the transaction `connection` is in.
    public func append<Payload: Encodable>(type: String, _ payload: Payload, on connection: isolated PostgresConnection) throws {
        precondition(connection.transactionStatus != .idle, "Outbox.append must run inside the state change's transaction")
        let json = try BusJSON.encode(payload)
        try connection.execute(insert, type, PostgresJSONB(bytes: [UInt8](json)))
    }

    /// Tells the relay that a transaction with events has committed, so it publishes them now.
    public func committed() {
        wakeRelay.withLock { $0 }?()
    }

    func connect(relay wake: @escaping @Sendable () -> Void) {
        wakeRelay.withLock { $0 = wake }
    }
}
