import Contracts
import Foundation
import GatewayTestSupport
import Postgres
import TestSupport
import Testing

/// User B of the isolation walk and everything B owns, made through the real routes: a complete
/// document with known bytes, an upload still in progress, a share link and a Storage signed URL,
/// a privacy acknowledgement on top of the sign-up's terms acceptance, and a pending account
/// deletion.
struct IsolationVictim {
    let user: GatewayHarness.User
    let appleId: String
    let documentId: String
    let bytes: Data
    /// `documents/<id>/<name>`, and the same percent-encoded into one path segment.
    let fileUrl: String
    let encodedFileUrl: String
    /// The object path inside the `documents` bucket (the file URL after `documents/`).
    let objectPath: String
    /// The tus URL of B's unfinished upload, and how many bytes it has.
    let uploadPath: String
    let uploadOffset: Int
    let shareLinkId: String
    let shareURL: String
    let deletionRequestId: String

    static func make(_ harness: GatewayHarness) async throws -> IsolationVictim {
        let appleId = "apple.victim." + UUID().uuidString
        let (id, token, _) = try await harness.signedUpUser(appleId: appleId)
        let user = GatewayHarness.User(id: id, token: token)
        let http = harness.http
        let bytes = GatewayHarness.randomBytes(300_000)
        let documentId = try await harness.upload(bytes, as: user, fileName: "victim.bin")
        let document = try await http.get("/api/documents/\(documentId)", headers: user.auth)
        let fileUrl = GatewayHarness.storedFileUrl(try #require(document.json["fileUrl"] as? String))
        let uploadPath = try await harness.tusCreate(user, length: 1000, fileName: "half.bin")
        let patched = try await harness.tusPatch(user, uploadPath, offset: 0, GatewayHarness.randomBytes(400))
        #expect(patched.status == 204)
        let link = try await http.send("POST", "/api/documents/\(documentId)/share-links", json: ["expiresInSeconds": 3600], headers: user.auth)
        #expect(link.status == 201, "\(link.text)")
        let objectPath = String(fileUrl.split(separator: "/", maxSplits: 1)[1])
        let signed = try await http.send("POST", "/storage/v1/object/sign/documents/\(objectPath)", json: ["expiresIn": 3600], headers: user.auth)
        #expect(signed.status == 200, "\(signed.text)")
        let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version
        let acknowledged = try await http.send("POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: user.auth)
        #expect(acknowledged.status == 201, "\(acknowledged.text)")
        let deletion = try await http.send("POST", "/api/me/deletion", headers: user.auth)
        #expect(deletion.status == 201, "\(deletion.text)")
        return IsolationVictim(
            user: user, appleId: appleId, documentId: documentId, bytes: bytes, fileUrl: fileUrl,
            encodedFileUrl: fileUrl.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, objectPath: objectPath,
            uploadPath: uploadPath, uploadOffset: 400,
            shareLinkId: try #require((link.json["link"] as? [String: Any])?["id"] as? String),
            shareURL: try #require(link.json["url"] as? String),
            deletionRequestId: try #require(deletion.json["requestId"] as? String))
    }

    /// Every row that belongs to B, in every schema, as text: equal before and after the walk
    /// means nothing of B's changed (documents with their committed bytes, SHA-256 and state, share
    /// links with their use counts and uses, the user row, sessions, the pending deletion, and
    /// B's audit records).
    func rows(_ harness: GatewayHarness) async throws -> [String: [String]] {
        let owner = try #require(UUID(uuidString: user.id))
        let queries: [String: String] = [
            "documents": "SELECT d::text FROM documents.documents d WHERE owner_id = $1 ORDER BY id",
            "share_links":
                "SELECT s::text FROM documents.share_links s JOIN documents.documents d ON d.id = s.document_id WHERE d.owner_id = $1 ORDER BY s.id",
            "share_link_uses": """
            SELECT u::text FROM documents.share_link_uses u JOIN documents.share_links s ON s.id = u.link_id
            JOIN documents.documents d ON d.id = s.document_id WHERE d.owner_id = $1 ORDER BY u.id
            """,
            "users": "SELECT u::text FROM accounts.users u WHERE id = $1",
            "sessions": "SELECT s::text FROM accounts.sessions s WHERE user_id = $1 ORDER BY 1",
            "deletion_requests": "SELECT r::text FROM accounts.deletion_requests r WHERE user_id = $1",
            "audit_records": """
            SELECT r.record_id::text || ' ' || r.document_type || ' ' || r.version || ' ' || r.action FROM audit.records r
            JOIN audit.subjects s ON s.pseudonym = r.subject WHERE s.user_id = $1 ORDER BY r.record_id
            """,
        ]
        // B's acts are chained by Audit after their replies: compare once it has caught up.
        try await harness.waitForChained()
        var rows: [String: [String]] = [:]
        for (name, sql) in queries {
            rows[name] = try await harness.database.pool.withConnection { db in
                try db.query(sql, owner).map { try $0.decode(String.self, column: 0) }
            }
        }
        return rows
    }

    /// What B sees over HTTP: the bytes' SHA-256, the upload's offset, the share links (with
    /// uses), the acceptance history, and that the shared URL still downloads.
    func view(_ harness: GatewayHarness) async throws -> [String: String] {
        let http = harness.http
        let content = try await http.get("/api/documents/\(documentId)/content", headers: user.auth)
        let upload = try await http.send("HEAD", uploadPath, headers: user.tus)
        let links = try await http.get("/api/documents/\(documentId)/share-links", headers: user.auth)
        let history = try await http.get("/api/me/consents/history", headers: user.auth)
        let list = try await http.get("/api/documents", headers: user.auth)
        return [
            "content": "\(content.status) \(GatewayHarness.sha256(content.body))",
            "upload": "\(upload.status) \(upload.header("Upload-Offset") ?? "-")",
            "links": "\(links.status) \(Self.canonical(links.json["links"] ?? []))",
            "history": "\(history.status) \(Self.canonical(history.json))",
            "documents": "\(list.status) \(Self.canonical(Self.withoutLinkSignatures(list.json["documents"] ?? [])))",
        ]
    }

    /// The documents with each `fileUrl`'s query (its signature and expiry) cut off: a signed
    /// link's expiry moves with the clock in steps, so two views taken either side of a step
    /// differ there and nowhere else.
    static func withoutLinkSignatures(_ value: Any) -> Any {
        guard let documents = value as? [[String: Any]] else { return value }
        return documents.map { document in
            var document = document
            if let url = document["fileUrl"] as? String { document["fileUrl"] = String(url.prefix { $0 != "?" }) }
            return document
        }
    }

    static func canonical(_ value: Any) -> String {
        (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])).map { String(decoding: $0, as: UTF8.self) }
            ?? "?"
    }
}
