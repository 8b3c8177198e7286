import Bus
import Contracts
import Crypto
import Foundation
import Hex

/// The Audit service's bus API: validates each request, then hands it to the committer, the
/// reader, the verifier or erasure. Bad input is refused here, before anything is written, and so
/// is any record or read without a principal (`unauthenticated` from
/// ``BusRequestContext/authorize(actingFor:)``): every record says who asked for it, and a
/// minor's consent history is read only by someone named. Verifying a receipt and reading the
/// receipt key stay open to anyone holding a receipt.
struct AuditHandlers: Sendable {
    let catalog: VersionCatalog
    let committer: GroupCommitter
    let reader: AuditReader
    let verifier: ChainVerifier
    let erasure: Erasure
    let signer: ReceiptSigner
    /// Reads of a user's records first wait for that user's acts Accounts has committed.
    let follower: ConsentFollower
    /// How long a read waits for them before it answers `unavailable`: under the gateway's 5 s
    /// bus deadline, and long enough to chain thousands of acts after an outage.
    static let readWait: Duration = .seconds(3)

    func register(on server: RPCServer) {
        server.register(AuditRecord.self) { request, context in try await record(request, context) }
        server.register(AuditRecordBatch.self) { request, context in try await recordBatch(request, context) }
        server.register(AuditStatus.self) { request, context in
            try context.authorize(actingFor: request.userId)
            try await follower.waitForActs(of: request.userId, within: readWait(context))
            return AuditStatus.Reply(documents: try await reader.status(of: request.userId))
        }
        server.register(AuditHistory.self) { request, context in
            try context.authorize(actingFor: request.userId)
            try await follower.waitForActs(of: request.userId, within: readWait(context))
            var reply = try await reader.history(request)
            for index in reply.records.indices { reply.records[index].receipt = signer.signed(reply.records[index].receipt) }
            return reply
        }
        server.register(AuditSelect.self) { request, context in
            try context.authorize(actingFor: request.userId)
            try await follower.waitForActs(of: request.userId, within: readWait(context))
            var reply = try await reader.select(request)
            reply.receipts = reply.receipts.map(signer.signed)
            return reply
        }
        server.register(AuditVerifyReceipt.self) { receipt, _ in try await verifier.verify(receipt) }
        server.register(AuditVerify.self) { _, context in
            guard context.principal.kind == .operator else { throw BusError(.forbidden, "verifying the chains is for operators") }
            return try await verifier.verifyAll()
        }
        server.register(AuditEraseSubject.self) { request, context in
            guard context.principal.kind == .operator || context.principal.kind == .service else {
                throw BusError(.forbidden, "erasure is requested by an operator or the accounts service")
            }
            try context.requireUserAccess()
            return AuditEraseSubject.Reply(erasedRecords: try await erasure.erase(request.userId))
        }
        server.register(AuditPublicKey.self) { _, _ in AuditPublicKey.Reply(publicKey: signer.publicKey) }
    }

    /// The read's wait: ``readWait``, or less when the caller's deadline comes sooner (half a
    /// second kept to read and answer).
    private func readWait(_ context: BusRequestContext) -> Duration {
        guard let deadline = context.deadline else { return Self.readWait }
        let left = Duration.milliseconds(Int64(deadline.timeIntervalSinceNow * 1000) - 500)
        return max(.zero, min(Self.readWait, left))
    }

    private func record(_ request: AuditRecord.Request, _ context: BusRequestContext) async throws -> ConsentReceipt {
        try context.authorize(actingFor: request.userId)
        let checked = try await check(request, key: context.idempotencyKey)
        return try await committer.record(checked.request, digest: checked.digest, idempotencyHash: checked.idempotencyHash)
    }

    /// Each item checked and answered on its own (a bad one fails alone), the good ones queued
    /// together so they commit in one group commit.
    private func recordBatch(_ request: AuditRecordBatch.Request, _ context: BusRequestContext) async throws -> AuditRecordBatch.Reply {
        guard try context.actingFor == .anyone else {
            throw BusError(.forbidden, "record_batch is for services acting for users; a user calls audit.record")
        }
        guard (1...AuditRecordBatch.maximumItems).contains(request.items.count) else {
            throw BusError(.invalidArgument, "a batch carries 1 to \(AuditRecordBatch.maximumItems) items")
        }
        var outcomes = [ItemOutcome<ConsentReceipt>?](repeating: nil, count: request.items.count)
        var checked: [(index: Int, record: (request: AuditRecord.Request, digest: String, idempotencyHash: String))] = []
        for (index, item) in request.items.enumerated() {
            do {
                checked.append((index, try await check(item.record, key: item.idempotencyKey)))
            } catch {
                outcomes[index] = ItemOutcome(error: BusError(converting: error, internalMessage: "the record could not be checked"))
            }
        }
        let results = await committer.record(checked.map(\.record), signed: request.signReceipts)
        for ((index, _), result) in zip(checked, results) { outcomes[index] = ItemOutcome(result) }
        return AuditRecordBatch.Reply(outcomes: outcomes.map { $0! })
    }

    /// The record as the committer takes it: validated, its version's digest from the catalog,
    /// and its key hashed with its user.
    private func check(_ request: AuditRecord.Request, key: String?) async throws
        -> (request: AuditRecord.Request, digest: String, idempotencyHash: String)
    {
        guard let key, !key.isEmpty else {
            throw BusError(.invalidArgument, "audit.record needs an idempotency key")
        }
        guard IdempotencyKeyRule.isValidBusKey(key) else {
            throw BusError(.invalidArgument, "the idempotency key is longer than \(IdempotencyKeyRule.busKeyMaximumBytes) bytes")
        }
        try Self.validate(request)
        let version = try await catalog.version(request.documentType, request.version)
        if request.action == .acknowledge && request.documentType != .privacyPolicy {
            throw BusError(.invalidArgument, "acknowledge applies to the privacy policy; accept or decline the terms")
        }
        return (request, version.digest, Self.idempotencyHash(request.userId, key))
    }

    static func validate(_ request: AuditRecord.Request) throws {
        try LegalVersionRule.check(request.version)
        if request.userId == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) {
            throw BusError(.invalidArgument, "userId must not be the nil UUID")
        }
        try ConsentClientRule.check(clientIP: request.clientIP, userAgent: request.userAgent)
    }

    /// Scoped to the user, so two users' keys never collide; hashed, so the key itself is not kept.
    static func idempotencyHash(_ user: UUID, _ key: String) -> String {
        Hex.string(SHA256.hash(data: Array((Hex.uuid(user) + "\n" + key).utf8)))
    }
}
