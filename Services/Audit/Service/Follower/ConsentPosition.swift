import Contracts
import Postgres

/// Audit's position in Accounts' consent stream (`audit.event_cursors`, publisher
/// ``ConsentFollower/publisher``, migration 0140): the last entry chained.
enum ConsentPosition: Equatable, Sendable {
    /// A sequence number of the numbered stream, from an Audit that followed it before Accounts
    /// ordered the stream by transaction (Accounts migration 0180). The first read after the
    /// upgrade sends it as `afterSequence`, so Accounts deletes the entries numbered up to it, and
    /// the first page chained replaces it.
    case numbered(Int64)
    case at(ConsentStreamPosition)

    /// From `last_sequence, last_transaction, last_entry`.
    init(_ row: PostgresRow) throws {
        let (sequence, transaction, entry) = try row.decode(Int64.self, Int64?.self, Int64?.self)
        if let transaction, let entry {
            self = .at(ConsentStreamPosition(transaction: transaction, entry: entry))
        } else {
            self = .numbered(sequence)
        }
    }

    /// Where the stream is read after.
    var stream: ConsentStreamPosition {
        if case .at(let position) = self { position } else { .start }
    }

    /// Whether every entry up to `position` is chained.
    func covers(_ position: ConsentStreamPosition) -> Bool {
        if case .at(let own) = self { own >= position } else { false }
    }

    /// The read of the entries after this position.
    func request(limit: Int, waitMilliseconds: Int) -> AccountsConsentsSince.Request {
        switch self {
        case .numbered(let sequence):
            AccountsConsentsSince.Request(after: .start, afterSequence: sequence, limit: limit, waitMilliseconds: waitMilliseconds)
        case .at(let position):
            AccountsConsentsSince.Request(after: position, limit: limit, waitMilliseconds: waitMilliseconds)
        }
    }
}
