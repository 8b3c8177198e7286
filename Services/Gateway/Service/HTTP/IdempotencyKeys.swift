import Bus
import Foundation
import HTTPTypes
import Hex
import Hummingbird

/// The `Idempotency-Key` header, passed to the bus so a client's retry of one action records it
/// once; without one, each request is its own action. Its length is the bus's rule
/// (``IdempotencyKeyRule``): a key outside it is refused, never ignored or cut. Reusing a key for
/// another body is refused by the service with `idempotency_key_reused` (422).
package enum IdempotencyKeys {
    static let header = HTTPField.Name("Idempotency-Key")!

    /// Scoped to the account acted on: the bus remembers keys across callers, so two users who
    /// happen to send the same key must not share a reply.
    package static func key(of request: Request, scope: UUID) throws -> String? {
        guard let value = request.headers[header] else { return nil }
        guard IdempotencyKeyRule.isValidClientKey(value) else {
            throw BusError(
                .invalidArgument, "Idempotency-Key must be 1 to \(IdempotencyKeyRule.clientKeyMaximumBytes) bytes",
                details: ["maximumBytes": String(IdempotencyKeyRule.clientKeyMaximumBytes)])
        }
        return "http:\(Hex.uuid(scope)):" + value
    }
}
