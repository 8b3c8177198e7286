import Foundation
import HTTPTypes
import Hummingbird

/// The `Idempotency-Key` header, passed to the bus so a client's retry of one action records it
/// once; without one, each request is its own action.
enum IdempotencyKeys {
    static let header = HTTPField.Name("Idempotency-Key")!

    /// Scoped to the account acted on: the bus remembers keys across callers, so two users who
    /// happen to send the same key must not share a reply.
    static func key(of request: Request, scope: UUID) -> String? {
        guard let value = request.headers[header], (1...200).contains(value.utf8.count) else { return nil }
        return "http:\(scope.uuidString.lowercased()):" + value
    }
}
