import CLibPQ
import Foundation
import Logging

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
        self.executor = ThreadExecutor(name: "postgres \(configuration)")
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

    // Isolated: runs on the connection thread, so PQfinish never races a running call.
    isolated deinit {
        if let raw { PQfinish(raw) }
    }

    private func open() throws {
        let keys = configuration.options.map { strdup($0.key) } + [nil]
        let values = configuration.options.map { strdup($0.value) } + [nil]
        defer { (keys + values).forEach { free($0) } }
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
        PQsetNoticeReceiver(raw, { context, result in
            guard let context, let result else { return }
            Unmanaged<NoticeContext>.fromOpaque(context).takeUnretainedValue().log(result)
        }, Unmanaged.passUnretained(noticeContext).toOpaque())
        logger.debug("postgres connected", metadata: ["target": "\(configuration)",
                                                      "backend_pid": "\(PQbackendPID(raw))"])
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

    /// Whether the connection is open and healthy, checked without a round trip: reads whatever
    /// the server sent (`PQconsumeInput`, non-blocking) so a server that shut down or restarted
    /// since the last use is noticed, then asks `PQstatus`.
    public var isUsable: Bool {
        guard let raw else { return false }
        guard PQconsumeInput(raw) == 1 else { return false }
        return PQstatus(raw) == CONNECTION_OK && PQtransactionStatus(raw) == PQTRANS_IDLE
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

/// What the notice receiver callback gets as its context: the connection's logger. A class so
/// it has a stable address; immutable, hence `Sendable`.
private final class NoticeContext: Sendable {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }

    func log(_ result: OpaquePointer) {
        let message = PQresultErrorMessage(result).map { String(cString: $0).trimmed } ?? ""
        logger.notice("postgres notice", metadata: ["message": "\(message)"])
    }
}
