import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// Recomputes every record's hash from what is stored and checks each link, and each signed
/// checkpoint against the chain it vouches for. An edited field, a deleted or inserted row, or a
/// forged checkpoint shows up as the first broken position of its chain.
struct ChainVerifier: Sendable {
    let pool: PostgresPool
    let signer: ReceiptSigner
    /// Rows read per query while walking a chain.
    var pageSize = 5000

    static let hashedColumns = """
        r.chain, r.position, r.record_id, r.subject, r.document_type, r.version, r.digest, r.action, r.recorded_ms,
        r.ip_hmac, r.ua_hmac, r.prev_hash, r.hash
        """

    /// The stored fields of a record and its stored hashes.
    static func stored(_ row: PostgresRow) throws -> (fields: ChainedFields, previous: [UInt8], hash: [UInt8]) {
        let fields = ChainedFields(
            chain: try row.decode(Int.self, column: 0), position: try row.decode(Int64.self, column: 1),
            recordID: try row.decode(UUID.self, column: 2), subject: try row.decode(UUID.self, column: 3),
            documentType: try row.decode(String.self, column: 4), version: try row.decode(String.self, column: 5),
            digest: try row.decode(String.self, column: 6), action: try row.decode(String.self, column: 7),
            recordedMilliseconds: try row.decode(Int64.self, column: 8), ipHMAC: try row.decode([UInt8]?.self, column: 9),
            userAgentHMAC: try row.decode([UInt8]?.self, column: 10))
        return (fields, try row.decode([UInt8].self, column: 11), try row.decode([UInt8].self, column: 12))
    }

    func verifyAll() async throws -> AuditVerify.Reply {
        let chains = try await pool.withConnection { db in
            try db.query("SELECT chain, head_position, head_hash FROM audit.chains ORDER BY chain").map {
                try $0.decode(Int.self, Int64.self, [UInt8].self)
            }
        }
        var reports: [AuditVerify.ChainReport] = []
        for (chain, headPosition, headHash) in chains {
            reports.append(try await verify(chain: chain, headPosition: headPosition, headHash: headHash))
        }
        let badCheckpoints = try await verifyCheckpoints()
        return AuditVerify.Reply(
            valid: reports.allSatisfy { $0.firstBrokenPosition == nil } && badCheckpoints.isEmpty, chains: reports,
            badCheckpoints: badCheckpoints)
    }

    private func verify(chain: Int, headPosition: Int64, headHash: [UInt8]) async throws -> AuditVerify.ChainReport {
        var previous = ChainedFields.genesis
        var expected: Int64 = 1
        var count: Int64 = 0
        func report(_ position: Int64?, _ problem: String?) -> AuditVerify.ChainReport {
            .init(chain: chain, records: count, headHash: Hex.string(headHash), firstBrokenPosition: position, problem: problem)
        }
        while true {
            let (from, limit) = (expected, pageSize)
            let page = try await pool.withConnection { db in
                try db.query(
                    """
                    SELECT \(Self.hashedColumns), r.client_ip, r.user_agent, s.secret
                    FROM audit.records r LEFT JOIN audit.subjects s ON s.pseudonym = r.subject
                    WHERE r.chain = $1 AND r.position >= $2 ORDER BY r.position LIMIT $3
                    """, chain, from, limit
                ).map { row in
                    (
                        try Self.stored(row), try row.decode(String?.self, column: 13), try row.decode(String?.self, column: 14),
                        try row.decode([UInt8]?.self, column: 15)
                    )
                }
            }
            for ((fields, storedPrevious, storedHash), ip, agent, secret) in page {
                count += 1
                if fields.position != expected { return report(expected, "record \(expected) is missing") }
                if storedPrevious != previous { return report(expected, "the link to record \(expected - 1) does not match") }
                if fields.hash(previous: previous) != storedHash { return report(expected, "the record's contents do not match its hash") }
                // While the subject exists, the raw IP and user agent must still match their HMACs.
                if let secret,
                    personalHMAC(ip, secret: secret) != fields.ipHMAC
                        || personalHMAC(agent, secret: secret) != fields.userAgentHMAC
                {
                    return report(expected, "the record's IP address or user agent was changed")
                }
                previous = storedHash
                expected += 1
            }
            if page.count < pageSize { break }
        }
        if expected - 1 != headPosition || (headPosition > 0 && previous != headHash) {
            return report(expected, "the chain head says \(headPosition) records, \(expected - 1) found")
        }
        return report(nil, nil)
    }

    /// Ids of checkpoints whose signature is not ours or whose head differs from the chain's record.
    private func verifyCheckpoints() async throws -> [Int64] {
        let rows = try await pool.withConnection { db in
            try db.query(
                """
                SELECT c.id, c.chain, c.position, c.head_hash, c.created_ms, c.signature, r.hash
                FROM audit.checkpoints c LEFT JOIN audit.records r ON r.chain = c.chain AND r.position = c.position
                ORDER BY c.id
                """
            ).map { try $0.decode(Int64.self, Int.self, Int64.self, [UInt8].self, Int64.self, String.self, [UInt8]?.self) }
        }
        return rows.compactMap { id, chain, position, head, milliseconds, signature, recordHash in
            let text = ReceiptSigner.checkpointText(chain: chain, position: position, headHash: head, milliseconds: milliseconds)
            let intact = signer.isValid(signature: signature, for: text) && recordHash == head
            return intact ? nil : id
        }
    }

    /// Checks a receipt against its stored record, the record against its hash and its link, and
    /// the receipt's signature.
    func verify(_ receipt: ConsentReceipt) async throws -> AuditVerifyReceipt.Reply {
        guard signer.isValid(receipt) else {
            return .init(valid: false, reason: "the signature does not match the receipt")
        }
        let rows = try await pool.withConnection { db in
            try db.query(
                """
                SELECT \(Self.hashedColumns), (SELECT p.hash FROM audit.records p WHERE p.chain = r.chain AND p.position = r.position - 1)
                FROM audit.records r WHERE r.record_id = $1
                """, receipt.recordId)
        }
        guard let row = rows.first else { return .init(valid: false, reason: "no such record") }
        let (fields, previous, hash) = try Self.stored(row)
        let linked = try row.decode([UInt8]?.self, column: 13) ?? ChainedFields.genesis
        let matches =
            fields.documentType == receipt.documentType.rawValue && fields.version == receipt.version
            && fields.digest == receipt.digest && fields.action == receipt.action.rawValue && fields.chain == receipt.chain
            && fields.position == receipt.position && Hex.string(hash) == receipt.hash
            && fields.recordedMilliseconds == receipt.recordedAt.millisecondsSince1970
        guard matches else { return .init(valid: false, reason: "the stored record differs from the receipt") }
        guard fields.hash(previous: previous) == hash, previous == linked else {
            return .init(valid: false, reason: "the stored record fails its hash chain")
        }
        return .init(valid: true, reason: nil)
    }
}
