import Bus
import Contracts
import Crypto
import Foundation
import Identity

/// The signed, expiring download URLs the gateway hands out as a document's `file_url`.
///
/// A link is Supabase Storage's signed-URL shape (seed 002's contract: the Supabase module serves
/// the download, `GET /storage/v1/object/sign/…`), so seed 002's `URLSession.download(from:)`,
/// `<video src>` and `<iframe src>` open it with no headers:
/// `<public base>/storage/v1/object/sign/documents/<id>/<name>?token=f1.<expires>.<mac>`, where
/// `mac` is HMAC-SHA256 over the document id, its owner and the expiry (Unix seconds). The owner
/// is inside the MAC but not in the URL. The download checks the MAC, the expiry and, on every
/// request, that the document still exists (a deleted document or account ends the link).
///
/// Keys come from `GATEWAY_FILE_URL_KEYS`: the first signs, every one verifies, so a key is
/// rotated by putting the new one first and dropping the old one a lifetime later. Expiries are
/// rounded up to a quarter of the lifetime, so reading the same row again within that step gives
/// the same URL (HTTP caches keep working) and a later read a fresh one.
package struct FileLinks: Sendable {
    /// Signing keys, the current one first.
    let keys: [SymmetricKey]
    let lifetimeSeconds: Int64

    static let prefix = "f1."

    init(keys: [SymmetricKey], lifetimeSeconds: Int64) {
        precondition(!keys.isEmpty, "a file link needs a signing key")
        self.keys = keys
        self.lifetimeSeconds = lifetimeSeconds
    }

    /// From `GATEWAY_FILE_URL_KEYS` and `GATEWAY_FILE_URL_LIFETIME`; without keys, one random
    /// 256-bit key for this process.
    init(settings: GatewaySettings) {
        let keys = settings.fileURLKeys.revealed.map { SymmetricKey(data: SHA256.hash(data: Data($0.utf8))) }
        self.init(keys: keys.isEmpty ? [SymmetricKey(size: .bits256)] : keys, lifetimeSeconds: Int64(settings.fileURLLifetime.inSeconds))
    }

    /// A token in this format (a share link's token never contains `.`).
    package static func isFileToken(_ token: String) -> Bool { token.hasPrefix(prefix) }

    /// The expiry a link made at `now` carries: at least a lifetime away, rounded up to the step.
    func expiry(now: Date) -> Int64 {
        let step = max(60, lifetimeSeconds / 4)
        let earliest = Int64(now.timeIntervalSince1970.rounded(.up)) + lifetimeSeconds
        return (earliest + step - 1) / step * step
    }

    func token(documentId: UUID, ownerId: UUID, expires: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Self.message(documentId, ownerId, expires), using: keys[0])
        return "\(Self.prefix)\(expires).\(Base64URL.encode(Array(mac)))"
    }

    /// The absolute download URL of `document` under `base` (no trailing `/`).
    func url(for document: Document, base: String, now: Date = Date()) -> String {
        url(fileUrl: document.fileUrl, documentId: document.id, ownerId: document.ownerId, base: base, now: now)
    }

    func url(fileUrl: String, documentId: UUID, ownerId: UUID, base: String, now: Date = Date()) -> String {
        // Stored file URLs hold only [A-Za-z0-9._-/]: nothing to escape.
        "\(base)/storage/v1/object/sign/\(fileUrl)?token=\(token(documentId: documentId, ownerId: ownerId, expires: expiry(now: now)))"
    }

    /// `document` as a client sees it: `fileUrl` made an absolute signed link.
    func presented(_ document: Document, base: String) -> Document {
        var copy = document
        copy.fileUrl = url(for: document, base: base)
        return copy
    }

    /// A `documents` row (a route module's table of them) with its `file_url` made an absolute signed link.
    package func presented(row: [String: JSONValue], base: String) -> [String: JSONValue] {
        guard case .string(let id)? = row["id"], case .string(let owner)? = row["user_id"], case .string(let stored)? = row["file_url"],
            let documentId = UUID(uuidString: id), let ownerId = UUID(uuidString: owner)
        else { return row }
        var copy = row
        copy["file_url"] = .string(url(fileUrl: stored, documentId: documentId, ownerId: ownerId, base: base))
        return copy
    }

    package enum Verdict: Equatable {
        /// Good until this Unix time.
        case valid(expires: Int64)
        case expired
        case invalid
    }

    /// Checks `token` for `document` with every key (constant-time comparison).
    package func verify(_ token: String, for document: Document, now: Date = Date()) -> Verdict {
        guard Self.isFileToken(token) else { return .invalid }
        let parts = token.dropFirst(Self.prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 12, parts[0].allSatisfy(\.isASCII), let expires = Int64(parts[0]), expires > 0,
            let mac = Base64URL.decode(String(parts[1])), mac.count == SHA256.byteCount
        else { return .invalid }
        let message = Self.message(document.id, document.ownerId, expires)
        guard keys.contains(where: { HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: $0) }) else { return .invalid }
        return Double(expires) <= now.timeIntervalSince1970 ? .expired : .valid(expires: expires)
    }

    static func message(_ documentId: UUID, _ ownerId: UUID, _ expires: Int64) -> Data {
        Data("compass-file-url/v1\n\(documentId.uuidString.lowercased())\n\(ownerId.uuidString.lowercased())\n\(expires)".utf8)
    }
}
