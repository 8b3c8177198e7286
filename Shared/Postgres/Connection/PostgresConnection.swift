import CLibPQ
import Foundation
import Locks
import Logging
import SystemCall

/// One libpq connection (`PGconn`), isolated to its own thread.
///
/// The actor's executor is a ``ThreadExecutor``: every method runs on the connection's dedicated
/// thread, so blocking libpq calls never stall Swift's cooperative pool. Methods are synchronous
/// (`throws`, not `async`): callers batch several statements in one hop with ``run(_:)`` or
/// ``PostgresPool/withConnection(_:)``, whose closure receives the isolated connection.
///
/// A connection serves one caller at a time; the actor guarantees it.
public actor PostgresConnection {
    private let executor: ThreadExecutor
    nonisolated var threadExecutor: ThreadExecutor { executor }
    /// The `PGconn`, or `nil` once closed.
    var raw: OpaquePointer?
    let configuration: PostgresConfiguration
    public nonisolated let logger: Logger
    /// Names of the statements prepared on this connection (see ``prepare(_:)``).
    var preparedNames: Set<String> = []
    /// Nesting depth of ``transaction(_:)``: 0 outside, 1 in BEGIN, more in savepoints.
    var transactionDepth = 0
    private let noticeContext: NoticeContext

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    private init(configuration: PostgresConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.executor = ThreadExecutor(name: "postgres")  // Linux thread names stop at 15 bytes
        self.noticeContext = NoticeContext(logger: logger)
    }

    /// Opens a connection (`PQconnectdbParams`) on a new dedicated thread.
    ///
    /// Throws a ``PostgresError`` of kind `.connection` when the server cannot be reached.
    public static func connect(configuration: PostgresConfiguration, logger: Logger) async throws
        -> PostgresConnection
    {
        let connection = PostgresConnection(configuration: configuration, logger: logger)
        try await connection.open()
        return connection
    }

    /// Opens a connection, runs `body` with it, and closes it whether `body` returned or threw: a
    /// command's one session (compass's bulk users, its wait for Audit, its role set-up).
    public static func using<T: Sendable>(
        configuration: PostgresConfiguration, logger: Logger, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let connection = try await connect(configuration: configuration, logger: logger)
        do {
            let result = try await body(connection)
            await connection.close()
            return result
        } catch {
            await connection.close()
            throw error
        }
    }

    // Isolated: runs on the connection thread, so PQfinish never races a running call.
    isolated deinit {
        if let raw { PQfinish(raw) }
    }

    private func open() throws {
        let keys = configuration.options.map { strdup($0.key) } + [nil]
        let values = configuration.options.map { strdup($0.value) } + [nil]
        defer { for pointer in keys + values { free(pointer) } }
        let raw = keys.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { keys in
            values.map { $0.map { UnsafePointer($0) } }.withUnsafeBufferPointer { values in
                PQconnectdbParams(keys.baseAddress, values.baseAddress, 0)
            }
        }
        guard let raw, PQstatus(raw) == CONNECTION_OK else {
            let error = PostgresError.fromConnection(raw, operation: "PQconnectdbParams", kind: .connection)
            if let raw { PQfinish(raw) }
            logger.debug("postgres connect failed", metadata: ["target": "\(configuration)", "error": "\(error)"])
            throw error
        }
        self.raw = raw
        PQsetNoticeReceiver(
            raw,
            { context, result in
                guard let context, let result else { return }
                Unmanaged<NoticeContext>.fromOpaque(context).takeUnretainedValue().log(result)
            }, Unmanaged.passUnretained(noticeContext).toOpaque())
        logger.debug(
            "postgres connected",
            metadata: [
                "target": "\(configuration)",
                "backend_pid": "\(PQbackendPID(raw))",
            ])
    }

    /// Closes the connection (`PQfinish`). Later calls throw a `.closed` error. Idempotent.
    public func close() {
        guard let raw else { return }
        PQfinish(raw)
        self.raw = nil
        preparedNames.removeAll()
    }

    /// Runs `body` on this connection's thread: several statements without suspension.
    @discardableResult
    public func run<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T) throws -> T {
        try body(self)
    }

    /// Whether the connection is open and healthy, checked without a round trip.
    ///
    /// When a server shuts down it sends idle clients a FATAL message and closes the socket.
    /// This reads whatever is waiting (`PQconsumeInput`, non-blocking) until the socket has
    /// nothing more, so both the message and the end of stream are seen; libpq then reports
    /// the EOF as `CONNECTION_BAD` and routes the idle-time FATAL to the notice receiver.
    public var isUsable: Bool {
        guard let raw else { return false }
        for _ in 0..<4 {
            guard PQconsumeInput(raw) == 1, PQstatus(raw) == CONNECTION_OK else { return false }
            var poller = pollfd(fd: PQsocket(raw), events: Int16(POLLIN), revents: 0)
            // Nothing waiting, or a socket poll refuses (closed): libpq's status below decides.
            guard let ready = try? systemCall("poll", { poll(&poller, 1, 0) }), ready > 0 else { break }
        }
        _ = PQisBusy(raw)  // parses what was read, so a FATAL notice reaches `noticeContext`
        return PQstatus(raw) == CONNECTION_OK && PQtransactionStatus(raw) == PQTRANS_IDLE
            && !noticeContext.serverSentFatal
    }

    /// Whether the connection has failed or was closed.
    public var isBroken: Bool {
        guard let raw else { return true }
        return PQstatus(raw) != CONNECTION_OK
    }

    /// The server process ID serving this connection (`PQbackendPID`), 0 when closed.
    public var backendPID: Int32 { raw.map { PQbackendPID($0) } ?? 0 }

    /// The `PGconn`, or a `.closed` error.
    func connection(for operation: String) throws -> OpaquePointer {
        guard let raw else {
            throw PostgresError(kind: .closed, operation: operation, message: "the connection is closed")
        }
        return raw
    }
}

/// What the notice receiver callback gets as its context: the connection's logger, and whether
/// the server sent a FATAL message outside a query (it is shutting the session down). A class so
/// it has a stable address.
private final class NoticeContext: Sendable {
    let logger: Logger
    private let fatal = LockedValue(false)

    init(logger: Logger) { self.logger = logger }

    var serverSentFatal: Bool { fatal.withLock { $0 } }

    func log(_ result: OpaquePointer) {
        let message = PQresultErrorMessage(result).map { String(cString: $0).trimmed } ?? ""
        let severity = PQresultErrorField(result, CPQ_DIAG_SEVERITY).map { String(cString: $0) }
        if severity == "FATAL" || severity == "PANIC" {
            fatal.withLock { $0 = true }
            logger.debug("postgres server ended the session", metadata: ["message": "\(message)"])
        } else {
            logger.debug("postgres notice", metadata: ["message": "\(message)"])
        }
    }
}
