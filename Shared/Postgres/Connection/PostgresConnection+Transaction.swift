import CLibPQ

extension PostgresConnection {
    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT` when it returns, `ROLLBACK` when it
    /// throws (and the error is rethrown).
    ///
    /// Nested calls use savepoints, so an inner failure rolls back only the inner part and the
    /// outer body may catch it and carry on.
    @discardableResult
    public func transaction<T>(_ body: (isolated PostgresConnection) throws -> T) throws -> T {
        let depth = transactionDepth
        let savepoint = "compass_savepoint_\(depth)"
        try query(depth == 0 ? "BEGIN" : "SAVEPOINT \(savepoint)")
        transactionDepth += 1
        defer { transactionDepth = depth }
        let value: T
        do {
            value = try body(self)
        } catch {
            rollBack(depth == 0 ? "ROLLBACK" : "ROLLBACK TO SAVEPOINT \(savepoint)", after: error)
            throw error
        }
        let commit: PostgresRows
        do {
            commit = try query(depth == 0 ? "COMMIT" : "RELEASE SAVEPOINT \(savepoint)")
        } catch {
            // A failed COMMIT (deferred constraint, serialization failure) already ended the
            // transaction; a failed RELEASE leaves the outer one aborted and its caller sees it.
            if depth == 0, let raw, PQtransactionStatus(raw) != PQTRANS_IDLE {
                rollBack("ROLLBACK", after: error)
            }
            throw error
        }
        if depth == 0 { try Self.checkCommitted(commit) }
        return value
    }

    /// A transaction in two round trips, for one whose statements can be sent together: `BEGIN`
    /// goes in one pipeline with `opening`; `body` reads their results (and may run more
    /// statements) and returns the closing statements and its value; those go in one pipeline
    /// with `COMMIT`. `ROLLBACK` if anything fails, and the first error is thrown.
    ///
    /// ``transaction(_:)`` pays a round trip for `BEGIN`, one per statement and one for `COMMIT`;
    /// for a short transaction that holds a lock, each is time the lock is held (and, on a busy
    /// machine, a wait for this thread and the server's to be scheduled again).
    public func pipelinedTransaction<T>(
        opening: [PipelineCall],
        _ body: (isolated PostgresConnection, [PostgresRows]) throws -> (closing: [PipelineCall], value: T)
    ) throws -> T {
        precondition(transactionDepth == 0, "pipelinedTransaction cannot be nested")
        do {
            let opened = try pipelineTransaction([PipelineCall(sql: "BEGIN", [])] + opening)
            transactionDepth = 1
            defer { transactionDepth = 0 }
            let (closing, value) = try body(self, Array(opened.dropFirst()))
            let closed = try pipelineTransaction(closing + [PipelineCall(sql: "COMMIT", [])])
            try Self.checkCommitted(closed[closed.count - 1])
            return value
        } catch {
            if transactionStatus == .inTransaction || transactionStatus == .failedTransaction {
                rollBack("ROLLBACK", after: error)
            }
            throw error
        }
    }

    /// `COMMIT` of a transaction aborted by an error its body caught "succeeds" with the tag
    /// `ROLLBACK`: that is a failure, reported as `25P02`.
    private static func checkCommitted(_ commit: PostgresRows) throws {
        guard commit.commandTag == "ROLLBACK" else { return }
        throw PostgresError(
            kind: .server, operation: "COMMIT", message: "the transaction was aborted by an earlier error and has been rolled back",
            sqlState: "25P02")
    }

    /// Rolls back after `error`; a failure here is logged, not thrown, so the caller sees the
    /// error that caused the rollback. A broken connection is discarded by the pool anyway.
    private func rollBack(_ sql: String, after error: any Error) {
        do {
            try query(sql)
        } catch let rollbackError {
            logger.debug(
                "postgres rollback failed",
                metadata: [
                    "error": "\(rollbackError)", "cause": "\(error)",
                ])
        }
    }

    /// `PQtransactionStatus` in words: idle, active, in a transaction, in a failed transaction.
    public var transactionStatus: TransactionStatus {
        guard let raw else { return .unknown }
        switch PQtransactionStatus(raw) {
        case PQTRANS_IDLE: return .idle
        case PQTRANS_ACTIVE: return .active
        case PQTRANS_INTRANS: return .inTransaction
        case PQTRANS_INERROR: return .failedTransaction
        default: return .unknown
        }
    }

    public enum TransactionStatus: Sendable {
        case idle, active, inTransaction, failedTransaction, unknown
    }
}
