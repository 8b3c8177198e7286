import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// Writes one batch of records to one chain in its own transaction, in two round trips: one
/// pipeline opens the transaction, locks the chain's head and finds or creates the subjects; the
/// other inserts the new rows, moves the head and commits.
///
/// Two, because the chain's lock is held from the first to the commit and every round trip in
/// between is time no other batch of this chain can use (on a busy machine, each is also a wait
/// for this thread and the server's to be scheduled again). The rows go as one `INSERT … SELECT
/// FROM unnest(…)` rather than a `COPY`: `COPY` cannot share a pipeline, and cost its own two
/// round trips plus one for the head and one for the commit.
///
/// Earlier records with the same idempotency keys are looked for only when `findingRepeats`: a
/// batch first goes without the look-up, and the unique index on the key refuses its insert if a
/// key was used before (the committer then runs it again with the look-up). A repeat is a retry,
/// rare; the look-up on every batch was a query per batch, and PostgreSQL kept its plan from when
/// the table was small: a sequential scan of every record, 35% of PostgreSQL's CPU under load.
///
/// Returns a receipt (unsigned) for every record of the batch, in order: new records, and the
/// original receipt for a repeated idempotency key (within the batch, or from before when
/// `findingRepeats`).
struct BatchWriter: Sendable {
    let chain: Int

    /// A subject that could be neither created nor found (erased by a concurrent request between
    /// our two statements): the batch is simply run again.
    struct SubjectRace: Error {}

    func write(_ batch: [PendingRecord], at now: Date, findingRepeats: Bool, on db: isolated PostgresConnection) throws
        -> [ConsentReceipt]
    {
        let users = Array(Set(batch.map(\.request.userId)))
        var opening = [
            PipelineCall(Self.lockHead, [chain]),
            PipelineCall(Self.upsertSubjects, [PostgresArrayLiteral.of(users.map { Hex.uuid($0) })]),
        ]
        if findingRepeats { opening.append(PipelineCall(sql: Self.findRepeats, [PostgresArrayLiteral.of(batch.map(\.idempotencyHash))])) }
        return try db.pipelinedTransaction(opening: opening) { db, results in
            guard let head = results[0].first else { throw BusError(.internal, "audit chain \(chain) has no row") }
            var position = try head.decode(Int64.self, column: 0)
            var previous = try head.decode([UInt8].self, column: 1)
            var subjects: [UUID: (pseudonym: UUID, secret: [UInt8])] = [:]
            for row in results[1] {
                let (user, pseudonym, secret) = try row.decode(UUID.self, UUID.self, [UInt8].self)
                subjects[user] = (pseudonym, secret)
            }
            let missing = users.filter { subjects[$0] == nil }
            if !missing.isEmpty {
                // Created by a concurrent batch after our statement's snapshot: a new statement sees it.
                for row in try db.query(Self.findSubjects, PostgresArrayLiteral.of(missing.map { Hex.uuid($0) })) {
                    let (user, pseudonym, secret) = try row.decode(UUID.self, UUID.self, [UInt8].self)
                    subjects[user] = (pseudonym, secret)
                }
            }
            var receipts: [String: ConsentReceipt] = [:]
            if findingRepeats {
                for row in results[2] { receipts[try row.decode(String.self, column: 0)] = try Self.receipt(row, from: 1) }
            }

            let milliseconds = now.millisecondsSince1970
            let recordedAt = Date(millisecondsSince1970: milliseconds)
            var rows = NewRecords(capacity: batch.count)
            for record in batch where receipts[record.idempotencyHash] == nil {
                guard let subject = subjects[record.request.userId] else { throw SubjectRace() }
                position += 1
                let request = record.request
                let fields = ChainedFields(
                    chain: chain, position: position, recordID: .timeOrdered(milliseconds: milliseconds),
                    subject: subject.pseudonym, documentType: request.documentType.rawValue, version: request.version,
                    digest: record.digest, action: request.action.rawValue, recordedMilliseconds: milliseconds,
                    ipHMAC: personalHMAC(request.clientIP, secret: subject.secret),
                    userAgentHMAC: personalHMAC(request.userAgent, secret: subject.secret))
                let hash = fields.hash(previous: previous)
                rows.append(fields, request: request, idempotencyHash: record.idempotencyHash, previous: previous, hash: hash)
                receipts[record.idempotencyHash] = ConsentReceipt(
                    recordId: fields.recordID, documentType: request.documentType, version: request.version,
                    digest: record.digest, action: request.action, recordedAt: recordedAt, chain: chain, position: position,
                    hash: Hex.string(hash), signature: "")
                previous = hash
            }
            let closing =
                rows.isEmpty
                ? []
                : [
                    PipelineCall(Self.insertRecords, rows.parameters(chain: chain, recordedMilliseconds: milliseconds)),
                    PipelineCall(Self.moveHead, [chain, position, previous]),
                ]
            return (closing, batch.map { receipts[$0.idempotencyHash]! })
        }
    }

    // Every batch runs these: prepared once per connection, so PostgreSQL parses and plans them
    // once instead of once per batch (parse and analysis were 5% of its CPU under load).
    static let lockHead = PostgresStatement(
        name: "audit_lock_head", sql: "SELECT head_position, head_hash FROM audit.chains WHERE chain = $1::int FOR UPDATE")
    static let moveHead = PostgresStatement(
        name: "audit_move_head", sql: "UPDATE audit.chains SET head_position = $2::bigint, head_hash = $3::bytea WHERE chain = $1::int")

    /// Inserts the subjects not yet known and returns every subject of the batch. The second
    /// half reads the statement's snapshot, which does not include the rows the first half inserts,
    /// so each user comes back once — or not at all if another transaction created it meanwhile
    /// (then ``findSubjects`` picks it up).
    ///
    /// New subjects are inserted in user-id order: two writers inserting the same new users wait
    /// on each other's uncommitted rows, and in one global order such waits cannot form a cycle
    /// (the same rule as Accounts' batch update; there a cycle was seen under load).
    ///
    /// New subjects get their pseudonym and secret from PostgreSQL's strong random source
    /// (`gen_random_uuid`; the secret is two of them, 244 random bits).
    ///
    /// The users already known, nearly all of them, are found first and only the others reach the
    /// `INSERT`: offered every user, it drew three random values and made a speculative insertion
    /// into the index for each before finding the conflict, and the final read looked each up again.
    static let upsertSubjects = PostgresStatement(
        name: "audit_upsert_subjects",
        sql: """
            WITH input AS (
                SELECT unnest($1::uuid[]) AS user_id
            ), known AS (
                SELECT s.user_id, s.pseudonym, s.secret FROM audit.subjects s JOIN input i USING (user_id)
            ), inserted AS (
                INSERT INTO audit.subjects (user_id, pseudonym, secret)
                SELECT user_id, gen_random_uuid(), uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) FROM input
                WHERE user_id NOT IN (SELECT user_id FROM known)
                ORDER BY user_id
                ON CONFLICT (user_id) DO NOTHING
                RETURNING user_id, pseudonym, secret
            )
            SELECT user_id, pseudonym, secret FROM inserted
            UNION ALL
            SELECT user_id, pseudonym, secret FROM known
            """)

    static let findSubjects = "SELECT user_id, pseudonym, secret FROM audit.subjects WHERE user_id = ANY($1::uuid[])"

    static let receiptColumns = "record_id, document_type, version, digest, action, recorded_ms, chain, position, hash"

    /// Not prepared: it runs only for a batch that repeats a key, and planned for its own keys it
    /// always takes the index (a plan kept from an empty table would not).
    static let findRepeats = """
        SELECT idempotency_hash, \(receiptColumns) FROM audit.records
        WHERE idempotency_hash = ANY($1::text[]) AND idempotency_hash IS NOT NULL
        """

    /// The new rows of a batch, column by column: the arrays ``insertRecords`` unnests.
    struct NewRecords {
        private var positions: [String?] = [], recordIDs: [String?] = [], subjects: [String?] = []
        private var documentTypes: [String?] = [], versions: [String?] = [], digests: [String?] = [], actions: [String?] = []
        private var clientIPs: [String?] = [], userAgents: [String?] = [], idempotencyHashes: [String?] = []
        private var ipHMACs: [[UInt8]?] = [], userAgentHMACs: [[UInt8]?] = [], previousHashes: [[UInt8]?] = [], hashes: [[UInt8]?] = []

        init(capacity: Int) { positions.reserveCapacity(capacity) }

        var isEmpty: Bool { positions.isEmpty }

        mutating func append(
            _ fields: ChainedFields, request: AuditRecord.Request, idempotencyHash: String, previous: [UInt8], hash: [UInt8]
        ) {
            positions.append(String(fields.position))
            recordIDs.append(Hex.uuid(fields.recordID))
            subjects.append(Hex.uuid(fields.subject))
            documentTypes.append(fields.documentType)
            versions.append(fields.version)
            digests.append(fields.digest)
            actions.append(fields.action)
            clientIPs.append(request.clientIP)
            userAgents.append(request.userAgent)
            ipHMACs.append(fields.ipHMAC)
            userAgentHMACs.append(fields.userAgentHMAC)
            idempotencyHashes.append(idempotencyHash)
            previousHashes.append(previous)
            hashes.append(hash)
        }

        /// The parameters of ``insertRecords``, in order.
        func parameters(chain: Int, recordedMilliseconds: Int64) -> [(any PostgresEncodable)?] {
            let text = [positions, recordIDs, subjects, documentTypes, versions, digests, actions, clientIPs, userAgents, idempotencyHashes]
            let bytea = [ipHMACs, userAgentHMACs, previousHashes, hashes]
            return [chain, recordedMilliseconds] + text.map { PostgresArrayLiteral.of($0) } + bytea.map { PostgresArrayLiteral.of(bytea: $0) }
        }
    }

    /// Prepared: every batch runs it. Every record of a batch has its chain and instant.
    static let insertRecords = PostgresStatement(
        name: "audit_insert_records",
        sql: """
            INSERT INTO audit.records (chain, recorded_ms, position, record_id, subject, document_type, version, digest,
                action, client_ip, user_agent, idempotency_hash, ip_hmac, ua_hmac, prev_hash, hash)
            SELECT $1::int, $2::bigint, r.* FROM unnest($3::bigint[], $4::uuid[], $5::uuid[], $6::text[], $7::text[],
                $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bytea[], $14::bytea[], $15::bytea[],
                $16::bytea[]) AS r
            """)

    /// A receipt (unsigned) from the ``receiptColumns`` of a row, starting at `first`.
    static func receipt(_ row: PostgresRow, from first: Int) throws -> ConsentReceipt {
        let recordID = try row.decode(UUID.self, column: first)
        let type = try row.decode(String.self, column: first + 1)
        let action = try row.decode(String.self, column: first + 4)
        guard let documentType = LegalDocumentType(rawValue: type), let action = AcceptanceAction(rawValue: action) else {
            throw BusError(.internal, "record \(recordID) has an unknown type or action")
        }
        return ConsentReceipt(
            recordId: recordID, documentType: documentType, version: try row.decode(String.self, column: first + 2),
            digest: try row.decode(String.self, column: first + 3), action: action,
            recordedAt: Date(millisecondsSince1970: try row.decode(Int64.self, column: first + 5)),
            chain: try row.decode(Int.self, column: first + 6), position: try row.decode(Int64.self, column: first + 7),
            hash: Hex.string(try row.decode([UInt8].self, column: first + 8)), signature: "")
    }
}
