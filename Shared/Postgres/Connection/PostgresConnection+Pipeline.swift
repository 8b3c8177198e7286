import CLibPQ

/// One statement of a ``PostgresConnection/pipeline(_:)``: a prepared statement or plain SQL,
/// with its parameters.
public struct PipelineCall: Sendable {
    enum Target: Sendable {
        case prepared(PostgresStatement)
        case sql(String)
    }

    let target: Target
    let parameters: [(any PostgresEncodable)?]

    /// Runs a prepared statement (prepared on the connection first if needed).
    public init(_ statement: PostgresStatement, _ parameters: [(any PostgresEncodable)?]) {
        target = .prepared(statement)
        self.parameters = parameters
    }

    /// Runs a parameterised SQL statement (unnamed, parsed for this call).
    public init(sql: String, _ parameters: [(any PostgresEncodable)?]) {
        target = .sql(sql)
        self.parameters = parameters
    }
}

extension PostgresConnection {
    /// Sends every call in one go using libpq's pipeline mode and returns each call's outcome,
    /// in order. Calls are **independent**: a sync point follows each, so one failing call does
    /// not affect the others (outside an explicit transaction; inside one, a failure aborts the
    /// transaction and later calls fail with `25P02`).
    ///
    /// Much faster than one round trip per statement: the network latency is paid once. Each
    /// independent call still commits on its own (one WAL flush each); for bulk writes prefer
    /// ``pipelineTransaction(_:)`` or a surrounding ``transaction(_:)``, which commit once.
    public func pipeline(_ calls: [PipelineCall]) throws -> [Result<PostgresRows, PostgresError>] {
        try runPipeline(calls, syncEach: true)
    }

    /// Sends every call in one go, all in one implicit transaction: either all take effect or,
    /// if one fails, none does and its error is thrown.
    @discardableResult
    public func pipelineTransaction(_ calls: [PipelineCall]) throws -> [PostgresRows] {
        let results = try runPipeline(calls, syncEach: false)
        // The first failure is the cause; later calls only report that the pipeline was aborted.
        return try results.map { try $0.get() }
    }

    /// Blocking-mode pipeline: libpq's send path reads and buffers incoming results whenever the
    /// socket is full, so queueing many calls before reading cannot deadlock.
    private func runPipeline(_ calls: [PipelineCall], syncEach: Bool) throws
        -> [Result<PostgresRows, PostgresError>]
    {
        guard !calls.isEmpty else { return [] }
        for call in calls { if case .prepared(let statement) = call.target { try prepare(statement) } }
        let raw = try connection(for: "PQenterPipelineMode")
        guard PQenterPipelineMode(raw) == 1 else {
            throw PostgresError.fromConnection(raw, operation: "PQenterPipelineMode")
        }
        defer { if let raw = self.raw { PQexitPipelineMode(raw) } }

        for call in calls {
            let sent = BoundParameters(call.parameters).withPointers { count, types, values, lengths, formats in
                switch call.target {
                case .prepared(let statement):
                    return PQsendQueryPrepared(raw, statement.name, count, values, lengths, formats, 1)
                case .sql(let sql):
                    return PQsendQueryParams(raw, sql, count, types, values, lengths, formats, 1)
                }
            }
            guard sent == 1 else { throw abandon(raw, operation: "PQsendQueryParams") }
            if syncEach, PQpipelineSync(raw) != 1 { throw abandon(raw, operation: "PQpipelineSync") }
        }
        if !syncEach, PQpipelineSync(raw) != 1 { throw abandon(raw, operation: "PQpipelineSync") }

        var outcomes: [Result<PostgresRows, PostgresError>] = []
        outcomes.reserveCapacity(calls.count)
        let syncs = syncEach ? calls.count : 1
        var syncsSeen = 0
        var current: Result<PostgresRows, PostgresError>?
        // Each call yields its result(s) then NULL; each sync point yields PGRES_PIPELINE_SYNC.
        while syncsSeen < syncs {
            guard let result = PQgetResult(raw) else {
                if let finished = current {
                    outcomes.append(finished)
                    current = nil
                } else if PQstatus(raw) == CONNECTION_BAD {
                    throw abandon(raw, operation: "PQgetResult")
                }
                continue
            }
            switch PQresultStatus(result) {
            case PGRES_PIPELINE_SYNC:
                PQclear(result)
                syncsSeen += 1
                if let finished = current {
                    outcomes.append(finished)
                    current = nil
                }
            case PGRES_PIPELINE_ABORTED:
                PQclear(result)
                current = .failure(
                    PostgresError(
                        kind: .server, operation: "pipeline",
                        message: "not executed: an earlier statement in the pipeline failed"))
            default:
                let outcome = Result { try checkResult(result, operation: "PQgetResult") }
                    .mapError { $0 as? PostgresError ?? PostgresError(kind: .server, operation: "PQgetResult", message: "\($0)") }
                // Keep the first error of a call; otherwise its last result.
                if case .failure = current {} else { current = outcome }
            }
        }
        guard outcomes.count == calls.count else {
            throw abandon(raw, operation: "pipeline: \(outcomes.count) results for \(calls.count) calls")
        }
        return outcomes
    }

    /// The pipeline is unusable after a send failure: the connection's state is unknown, so
    /// close it (a pool then replaces it) and report the failure as a connection error.
    private func abandon(_ raw: OpaquePointer, operation: String) -> PostgresError {
        let error = PostgresError.fromConnection(raw, operation: operation, kind: .connection)
        logger.debug("postgres pipeline failed; closing the connection", metadata: ["error": "\(error)"])
        close()
        return error
    }
}
