import Contracts
import Foundation
import Hex
import Postgres

/// A chain's head: the position and hash of its last record.
struct ChainHead: Sendable, Equatable {
    var position: Int64
    var hash: [UInt8]
}

/// The new rows of a batch, column by column (the arrays the insert unnests), and each record's
/// receipt (unsigned), built on a chain's head from the batch's subjects.
struct NewRecords {
    private var recordedMilliseconds: [String?] = [], positions: [String?] = [], recordIDs: [String?] = [], subjects: [String?] = []
    private var documentTypes: [String?] = [], versions: [String?] = [], digests: [String?] = [], actions: [String?] = []
    private var clientIPs: [String?] = [], userAgents: [String?] = [], idempotencyHashes: [String?] = []
    private var ipHMACs: [[UInt8]?] = [], userAgentHMACs: [[UInt8]?] = [], previousHashes: [[UInt8]?] = [], hashes: [[UInt8]?] = []

    let chain: Int
    /// The chain's head once these rows are in.
    private(set) var head: ChainHead
    /// One receipt per record of the batch, in order: its new record's, or the one in `earlier`.
    private(set) var receipts: [ConsentReceipt] = []

    /// Chains the records of `batch` after `head`, at `now` (a record that carries its own time
    /// and id, one from Accounts' consent stream, keeps them). A record whose idempotency hash is in
    /// `earlier` (a retry of a committed record) or repeats one earlier in the batch gets that
    /// receipt and no row. Throws ``BatchWriter/SubjectRace`` for a user missing from `subjects`.
    init(
        _ batch: [PendingRecord], chain: Int, after head: ChainHead, subjects: [UUID: Subject], at now: Date,
        earlier: [String: ConsentReceipt] = [:]
    ) throws {
        self.chain = chain
        self.head = head
        let batchMilliseconds = now.millisecondsSince1970
        positions.reserveCapacity(batch.count)
        receipts.reserveCapacity(batch.count)
        var known = earlier
        for record in batch {
            if let receipt = known[record.idempotencyHash] {
                receipts.append(receipt)
                continue
            }
            guard let subject = subjects[record.request.userId] else { throw BatchWriter.SubjectRace() }
            let request = record.request
            let milliseconds = record.recordedMilliseconds ?? batchMilliseconds
            let recordedAt = Date(millisecondsSince1970: milliseconds)
            let fields = ChainedFields(
                chain: chain, position: self.head.position + 1, recordID: record.recordId ?? .timeOrdered(milliseconds: milliseconds),
                subject: subject.pseudonym, documentType: request.documentType.rawValue, version: request.version,
                digest: record.digest, action: request.action.rawValue, recordedMilliseconds: milliseconds,
                ipHMAC: personalHMAC(request.clientIP, keyed: subject.keyed),
                userAgentHMAC: personalHMAC(request.userAgent, keyed: subject.keyed))
            let hash = fields.hash(previous: self.head.hash)
            append(fields, request: request, idempotencyHash: record.idempotencyHash, previous: self.head.hash, hash: hash)
            let receipt = ConsentReceipt(
                recordId: fields.recordID, documentType: request.documentType, version: request.version,
                digest: record.digest, action: request.action, recordedAt: recordedAt, chain: chain, position: fields.position,
                hash: Hex.string(hash), signature: "")
            known[record.idempotencyHash] = receipt
            receipts.append(receipt)
            self.head = ChainHead(position: fields.position, hash: hash)
        }
    }

    var isEmpty: Bool { positions.isEmpty }

    /// How many rows (new records) there are.
    var count: Int { positions.count }

    /// The distinct pseudonyms of the rows.
    var pseudonyms: [String?] { Array(Set(subjects)) }

    private mutating func append(
        _ fields: ChainedFields, request: AuditRecord.Request, idempotencyHash: String, previous: [UInt8], hash: [UInt8]
    ) {
        recordedMilliseconds.append(String(fields.recordedMilliseconds))
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

    /// The parameters `$1` to `$16` of ``insertRecords`` (and of ``BatchWriter/appendRecords``).
    var parameters: [(any PostgresEncodable)?] {
        let text = [
            recordedMilliseconds, positions, recordIDs, subjects, documentTypes, versions, digests, actions, clientIPs, userAgents, idempotencyHashes,
        ]
        let bytea = [ipHMACs, userAgentHMACs, previousHashes, hashes]
        return [chain] + text.map { PostgresArrayLiteral.of($0) } + bytea.map { PostgresArrayLiteral.of(bytea: $0) }
    }

    /// The rows' `INSERT … SELECT` from ``parameters``; `also` (e.g. `checked WHERE checked.ok`) is
    /// joined to the rows' source when given. Every record of a batch has its chain; each its own instant.
    static func insertSQL(from also: String? = nil) -> String {
        """
        INSERT INTO audit.records (chain, recorded_ms, position, record_id, subject, document_type, version, digest,
            action, client_ip, user_agent, idempotency_hash, ip_hmac, ua_hmac, prev_hash, hash)
        SELECT $1::int, r.* FROM unnest($2::bigint[], $3::bigint[], $4::uuid[], $5::uuid[], $6::text[], $7::text[],
            $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bytea[], $14::bytea[], $15::bytea[],
            $16::bytea[]) AS r\(also.map { ", \($0)" } ?? "")
        """
    }

    /// Prepared: every batch read the two-round-trip way runs it.
    static let insertRecords = PostgresStatement(name: "audit_insert_records", sql: insertSQL())
}
