import AccountsService
import Bus
import Contracts
import Crypto
import Foundation
import Identity
import TestSupport
import Testing

/// The signed deletion certificate: verifiable offline with `accounts.public_keys`, the same on
/// a repeat and by id, and free of personal data.
@Suite(.serialized) struct CertificateTests {
    @Test func confirmedDeletionCarriesAVerifiableCertificateWithoutPersonalData() async throws {
        try await AccountsHarness.run { harness in
            let appleId = "apple.certificate-\(UUID().uuidString)"
            let user = try await harness.signUp(appleId: appleId, email: "jordan.miles@example.com", name: "Jordan Miles")
            let id = try #require(user.id)
            let request = try await harness.requestDeletion(id)
            let deleted = try await harness.confirmDeletion(id, request.requestId)
            let certificate = try #require(deleted.certificate)

            // Offline: the Ed25519 signature over `header.payload` with the listed key.
            let keys = try await harness.accountsClient.call(AccountsPublicKeys.self, Empty(), principal: .anonymous)
            let parts = certificate.token.split(separator: ".", omittingEmptySubsequences: false)
            #expect(parts.count == 3)
            let header = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[0]))) as? [String: Any]
            #expect(header?["alg"] as? String == "EdDSA" && header?["typ"] as? String == DeletionCertificate.tokenType)
            let listed = try #require(keys.certificateKeys.first { $0.keyId == header?["kid"] as? String })
            let publicKey = try Curve25519.Signing.PublicKey(rawRepresentation: try #require(Data(base64Encoded: listed.publicKey)))
            let signature = try #require(Base64URL.decode(parts[2]))
            #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
            // A changed payload does not verify.
            let forged = Base64URL.encode(
                Data(
                    String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
                        .replacingOccurrences(of: "in_app", with: "in_apq").utf8))
            #expect(!publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(forged)".utf8)))

            // What it states.
            let payload = try #require(Base64URL.decode(parts[1]))
            let claims = try BusJSON.decoder().decode(DeletionCertificateClaims.self, from: payload)
            #expect(claims == certificate.claims)
            #expect(claims.deletedAt == deleted.deletedAt && claims.requestedAt == request.requestedAt && claims.trigger == "in_app")
            #expect(claims.deleted.first { $0.category == "eligibility_confirmations" }?.count == 1)
            #expect(claims.deleted.first { $0.category == "profile" }?.count == 1)
            #expect(claims.kept.map(\.category).contains("consent_records"))
            // The person can show it is theirs; nothing in it names them.
            #expect(claims.subjectDigest == DeletionCertifier.subjectDigest(userId: id, salt: claims.subjectSalt))
            let text = String(decoding: payload, as: UTF8.self) + certificate.token
            for personal in [appleId, "jordan.miles@example.com", "Jordan Miles", id.uuidString.lowercased(), id.uuidString] {
                #expect(!text.contains(personal), "certificate contains \(personal)")
            }

            // A repeat returns the same certificate; so does a fetch by id.
            #expect(try await harness.confirmDeletion(id, request.requestId).certificate == certificate)
            let fetched = try await harness.accountsClient.call(
                AccountsDeletionCertificate.self, .init(certificateId: certificate.certificateId), principal: .anonymous)
            #expect(fetched == certificate)
            let unknown = try await harness.refusal {
                try await harness.accountsClient.call(AccountsDeletionCertificate.self, .init(certificateId: UUID()), principal: .anonymous)
            }
            #expect(unknown.code == .notFound)
        }
    }

    @Test func aDedicatedCertificateKeySignsAndItsPredecessorIsListed() async throws {
        let current = Curve25519.Signing.PrivateKey()
        let previous = Curve25519.Signing.PrivateKey()
        let extra = [
            "ACCOUNTS_CERTIFICATE_SIGNING_KEY": "c2=\(current.rawRepresentation.base64EncodedString())",
            "ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS": "c1=\(previous.publicKey.rawRepresentation.base64EncodedString())",
        ]
        try await AccountsHarness.run(extra: extra) { harness in
            let keys = try await harness.accountsClient.call(AccountsPublicKeys.self, Empty(), principal: .anonymous)
            #expect(keys.certificateKeys.map(\.keyId) == ["c2", "c1"])
            #expect(keys.certificateKeys[0].publicKey == current.publicKey.rawRepresentation.base64EncodedString())
            #expect(keys.sessionKeys.map(\.keyId) == ["s1"])
            let id = try #require(try await harness.signUp().id)
            let request = try await harness.requestDeletion(id)
            let certificate = try #require(try await harness.confirmDeletion(id, request.requestId).certificate)
            let payload = try await Ed25519JWS.verify(certificate.token, type: DeletionCertificate.tokenType, keys: ["c2": current.publicKey])
            #expect(try BusJSON.decoder().decode(DeletionCertificateClaims.self, from: payload) == certificate.claims)
            await #expect(throws: IdentityError.self) {
                try await Ed25519JWS.verify(certificate.token, type: DeletionCertificate.tokenType, keys: ["c2": previous.publicKey])
            }
        }
    }
}
