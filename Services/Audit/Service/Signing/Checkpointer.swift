import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// Signs each chain's head into `audit.checkpoints` every `interval` (when it moved) and once
/// more at shutdown. A checkpoint pins everything before it: editing an earlier record changes
/// the head hash the signature covers.
final class Checkpointer: Service, Sendable {
    private let pool: PostgresPool
    private let signer: ReceiptSigner
    private let interval: Duration
    private let logger: Logger

    init(pool: PostgresPool, signer: ReceiptSigner, interval: Duration, logger: Logger) {
        self.pool = pool
        self.signer = signer
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            do { try await checkpoint() } catch {
                logger.warning("audit checkpoint failed", metadata: ["error": "\(error)"])
            }
        }
        do { try await checkpoint() } catch {
            logger.warning("final audit checkpoint failed", metadata: ["error": "\(error)"])
        }
    }

    /// Signs the head of every chain that moved since its last checkpoint; returns how many.
    @discardableResult
    func checkpoint(now: Date = Date()) async throws -> Int {
        let milliseconds = now.millisecondsSince1970
        return try await pool.withTransaction { db in
            let heads = try db.query(
                """
                SELECT h.chain, h.head_position, h.head_hash FROM audit.chains h
                WHERE h.head_position > coalesce((SELECT max(position) FROM audit.checkpoints c WHERE c.chain = h.chain), 0)
                """
            ).map { try $0.decode(Int.self, Int64.self, [UInt8].self) }
            for (chain, position, hash) in heads {
                let text = ReceiptSigner.checkpointText(chain: chain, position: position, headHash: hash, milliseconds: milliseconds)
                try db.execute(
                    """
                    INSERT INTO audit.checkpoints (chain, position, head_hash, created_ms, public_key, signature)
                    VALUES ($1, $2, $3, $4, $5, $6)
                    """, chain, position, hash, milliseconds, self.signer.publicKey, self.signer.sign(text))
            }
            return heads.count
        }
    }
}
