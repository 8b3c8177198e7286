import ArgumentParser
import DocumentsService
import Foundation
import Logging
import ObjectStorage
import Postgres
import ServiceKit

/// `compass documents …`: operations on Documents' stored bytes.
struct DocumentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documents", abstract: "Operate on documents' stored bytes.", subcommands: [MigrateStorage.self])
}

/// `compass documents migrate-storage --to s3|postgres`.
///
/// It runs against the database and the bucket directly, with Documents' own settings, rather
/// than as a bus method: a copy of hundreds of gigabytes outlives any request's deadline, and its
/// progress is the operator's to watch. Run it where Documents runs, with its environment
/// (`deploy/compose exec documents compass documents migrate-storage --to s3`, `kubectl exec
/// deploy/documents -- …`): the same role, so Documents can read and unlink the large objects
/// it makes, and the same DOCUMENTS_S3_* settings.
struct MigrateStorage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate-storage",
        abstract: "Move complete documents' bytes to S3 (--to s3) or to PostgreSQL large objects (--to postgres).",
        discussion: """
            Reads DATABASE_URL (Documents' runtime role: run it in Documents' container, with its environment) and
            DOCUMENTS_S3_ENDPOINT, _REGION, _BUCKET, _ACCESS_KEY_ID, _SECRET_ACCESS_KEY, _PATH_STYLE, _PART_SIZE.
            One document at a time under its row lock: copied, read back and checked (size and SHA-256), then
            switched, the old bytes queued for Documents' removal sweeps. Documents keeps serving meanwhile
            (reads go to the old copy until the switch; deleting the document being copied waits for it).
            Stopped or crashed, it leaves every row on one store or the other: run it again to continue.
            Set DOCUMENTS_STORAGE to the same store first, so new uploads stop landing on the old one.
            """)

    @Option(help: "Where the bytes go: s3 or postgres.") var to: String
    @Flag(help: "Print what would move (documents and bytes) and change nothing.") var dryRun = false
    @Option(help: "Move at most this many documents, then stop.") var limit: Int?

    func run() async throws {
        guard let direction = StorageMigrator.Direction(rawValue: to) else {
            throw ValidationError("--to must be s3 or postgres, not \(to)")
        }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        let environment = EnvironmentReader()
        let settings: DocumentsSettings
        do { settings = try DocumentsSettings(environment: environment) } catch { throw CLIError("\(error)") }
        guard let s3 = settings.s3 else {
            throw CLIError("DOCUMENTS_S3_ENDPOINT is not set: the bucket's settings are needed in both directions")
        }
        let url = try DatabaseURL.required(role: "Documents' runtime role (its own, from its environment)")
        var logger = Logger(label: "compass") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .error
        let client = try S3Client(configuration: s3, logger: logger)
        do { try await client.checkBucket() } catch { throw CLIError("the bucket \(s3.bucket) at \(s3.endpoint) does not answer: \(error)") }
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresConfiguration(url, applicationName: "compass-migrate-storage"), logger: logger)
        defer { Task { await connection.close() } }
        // A part's S3 call leaves the row's transaction idle for a moment; a server-wide limit
        // shorter than a slow part would end the session, so this session sets its own.
        try await connection.run { db in try db.execute("SET idle_in_transaction_session_timeout = '5min'") }
        let migrator = StorageMigrator(connection: connection, client: client, direction: direction, partSize: settings.s3PartSize)
        let before = try await migrator.remaining()
        print("documents on \(direction.source): \(before.count) complete, \(Self.megabytes(before.bytes)) MB; moving to \(direction.rawValue)")
        if dryRun {
            print("dry run: nothing moved")
            return
        }
        try await Self.move(migrator, limit: limit ?? Int.max, total: min(before.count, limit ?? Int.max))
        let after = try await migrator.remaining()
        print("left on \(direction.source): \(after.count) (\(Self.megabytes(after.bytes)) MB)\(after.count > 0 ? ": run again to continue" : "")")
    }

    static func move(_ migrator: StorageMigrator, limit: Int, total: Int) async throws {
        var cursor: UUID?
        var moved = 0
        var refused = 0
        var bytes: Int64 = 0
        let clock = ContinuousClock()
        let start = clock.now
        while moved + refused < limit, let outcome = try await migrator.moveNext(after: cursor) {
            let (seconds, attoseconds) = (clock.now - start).components
            let elapsed = max(Double(seconds) + Double(attoseconds) / 1e18, 0.001)
            switch outcome {
            case .moved(let row):
                moved += 1
                bytes += row.length
                cursor = row.id
                print(
                    "[\(moved + refused)/\(total)] moved \(row.id.uuidString.lowercased()) (\(megabytes(row.length)) MB); "
                        + String(format: "%.1f MB/s", Double(bytes) / 1_000_000 / elapsed))
            case .refused(let row, let reason):
                refused += 1
                cursor = row.id
                print("[\(moved + refused)/\(total)] left \(row.id.uuidString.lowercased()) where it is: \(reason)")
            }
        }
        print("moved \(moved) documents (\(megabytes(bytes)) MB), refused \(refused)")
    }

    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f", Double(bytes) / 1_000_000) }
}
