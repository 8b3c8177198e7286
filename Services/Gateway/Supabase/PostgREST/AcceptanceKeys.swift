import Contracts
import Crypto
import Foundation
import GatewayService
import Hex
import Hummingbird

/// The idempotency key of one row of a `legal_acceptances` insert, scoped to its user:
/// - with an `Idempotency-Key` header: that key and the row's index, so a retried request
///   records each of its rows once;
/// - with `Prefer: resolution=ignore-duplicates`: the natural key (user, document type, version,
///   action), hashed to a fixed length, so the same act is recorded once however often it is sent;
/// - otherwise a key of this request alone (every insert records).
enum AcceptanceKeys {
    static func key(
        of request: Request, user: UUID, type: LegalDocumentType, version: String, action: AcceptanceAction,
        ignoreDuplicates: Bool, index: Int, requestID: String
    ) throws -> String {
        let scope = user.uuidString.lowercased()
        if let key = try IdempotencyKeys.key(of: request, scope: user) { return "\(key):\(index)" }
        if ignoreDuplicates {
            let natural = [scope, type.rawValue, version, action.rawValue].joined(separator: "\n")
            return "rest:" + Hex.string(SHA256.hash(data: Data(natural.utf8)))
        }
        return "rest:\(scope):\(requestID):\(index)"
    }
}
