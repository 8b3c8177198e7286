import Bus
import Crypto
import Foundation
import Identity
import Testing

@testable import CompassCLI

/// `compass keys rotate`: each key replaced, what the old key made kept working through the
/// overlap, every other line of the file left as it was, and what cannot be rotated refused.
@Suite struct KeyRotationTests {
    static let day = Date(timeIntervalSince1970: 1_796_515_200)  // 2026-12-06T00:00:00Z
    static func generated() throws -> EnvFile { EnvFile(try Keys.Generate.environmentFile(now: day)) }

    static func rotated(_ name: String, _ file: EnvFile, finish: Bool = false) throws -> EnvFile {
        var copy = file
        try KeyRotation.rotate(name, in: &copy, finish: finish, now: day)
        return copy
    }

    static func publicKey(seed: String) throws -> String {
        try Curve25519.Signing.PrivateKey(rawRepresentation: try #require(Data(base64Encoded: seed))).publicKey.rawRepresentation
            .base64EncodedString()
    }

    /// The lines of `after` that are not in `before`, by variable name.
    static func changed(_ before: EnvFile, _ after: EnvFile) -> Set<String> {
        Set(after.lines.filter { !before.lines.contains($0) && !$0.hasPrefix("#") }.map { String($0.prefix { $0 != "=" }) })
    }

    @Test func theAuditKeyIsReplacedAndItsPublicKeyKeptForOldReceipts() throws {
        let file = try Self.generated()
        let old = try #require(file["AUDIT_SIGNING_KEY"])
        let after = try Self.rotated("AUDIT_SIGNING_KEY", file)
        #expect(after["AUDIT_SIGNING_KEY"] != old && Data(base64Encoded: after["AUDIT_SIGNING_KEY"] ?? "")?.count == 32)
        #expect(after["AUDIT_PREVIOUS_PUBLIC_KEYS"] == (try Self.publicKey(seed: old)))
        #expect(Self.changed(file, after) == ["AUDIT_SIGNING_KEY", "AUDIT_PREVIOUS_PUBLIC_KEYS"])
        let twice = try Self.rotated("AUDIT_SIGNING_KEY", after)
        #expect(twice["AUDIT_PREVIOUS_PUBLIC_KEYS"]?.split(separator: ",").count == 2)
        #expect(throws: KeyRotation.Refusal.self) { try Self.rotated("AUDIT_SIGNING_KEY", after, finish: true) }
    }

    @Test func theSessionKeyGetsANewIdAndTheOldOneStaysValid() throws {
        let file = try Self.generated()
        let old = try #require(file["ACCOUNTS_SESSION_SIGNING_KEY"])  // a bare seed: kid s1
        let after = try Self.rotated("ACCOUNTS_SESSION_SIGNING_KEY", file)
        let new = try #require(after["ACCOUNTS_SESSION_SIGNING_KEY"])
        #expect(new.hasPrefix("s-20261206="))
        #expect(after["ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS"] == "s1=\(try Self.publicKey(seed: old))")
        // What Accounts reads: the new key current, the old one among the previous.
        let keys = try SessionKeySet(currentConfiguration: new, previousConfiguration: after["ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS"]!)
        #expect(keys.current.id == "s-20261206" && keys.previous.keys.sorted() == ["s1"])
        // Again the same day: a distinct id, both old ones kept.
        let twice = try Self.rotated("ACCOUNTS_SESSION_SIGNING_KEY", after)
        #expect(twice["ACCOUNTS_SESSION_SIGNING_KEY"]?.hasPrefix("s-20261206-2=") == true)
        #expect(twice["ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS"]?.split(separator: ",").map { $0.prefix { $0 != "=" } } == ["s1", "s-20261206"])
    }

    @Test func theCertificateKeyRotatesAndAnOlderFileStartsFromTheSessionKey() throws {
        let file = try Self.generated()
        let old = try #require(file["ACCOUNTS_CERTIFICATE_SIGNING_KEY"])
        let after = try Self.rotated("ACCOUNTS_CERTIFICATE_SIGNING_KEY", file)
        #expect(after["ACCOUNTS_CERTIFICATE_SIGNING_KEY"]?.hasPrefix("cert-20261206-2=") == true)  // the generated one is cert-20261206
        let oldSeed = String(old.split(separator: "=", maxSplits: 1)[1])
        #expect(after["ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS"] == "cert-20261206=\(try Self.publicKey(seed: oldSeed))")
        // A keys file from before the certificate key: certificates were signed with the session key.
        var older = file
        older.set("ACCOUNTS_CERTIFICATE_SIGNING_KEY", "")
        let first = try Self.rotated("ACCOUNTS_CERTIFICATE_SIGNING_KEY", older)
        #expect(first["ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS"] == "s1=\(try Self.publicKey(seed: file["ACCOUNTS_SESSION_SIGNING_KEY"]!))")
    }

    @Test func listedKeysGetANewFirstAndFinishKeepsOnlyIt() throws {
        var file = try Self.generated()
        let url = try #require(file["GATEWAY_FILE_URL_KEYS"])
        let after = try Self.rotated("GATEWAY_FILE_URL_KEYS", file)
        let keys = try #require(after["GATEWAY_FILE_URL_KEYS"]).split(separator: ",").map(String.init)
        #expect(keys.count == 2 && keys[1] == url && keys[0].count >= 32)
        #expect(try Self.rotated("GATEWAY_FILE_URL_KEYS", after, finish: true)["GATEWAY_FILE_URL_KEYS"] == keys[0])

        #expect(throws: KeyRotation.Refusal.self) { try Self.rotated("ACCOUNTS_APPLE_TOKEN_KEYS", file) }  // not configured
        file.set("ACCOUNTS_APPLE_TOKEN_KEYS", "t1=\(Data(count: 32).base64EncodedString())")
        let sealed = try Self.rotated("ACCOUNTS_APPLE_TOKEN_KEYS", file)
        let ring = try #require(sealed["ACCOUNTS_APPLE_TOKEN_KEYS"])
        #expect(ring.hasPrefix("a-20261206=") && ring.hasSuffix(",t1=\(Data(count: 32).base64EncodedString())"))
        #expect((try? EncryptionKeyRing(configuration: ring))?.currentID == "a-20261206")
    }

    @Test func aClientPairIsAdmittedTwiceUntilFinished() throws {
        let file = try Self.generated()
        let oldPublic = try #require(file["OPERATOR_PUBLIC_KEY"])
        let after = try Self.rotated("OPERATOR", file)
        let pair = try CurveKeyPair(secretKey: try #require(after["OPERATOR_SECRET_KEY"]))
        #expect(pair.publicKey == after["OPERATOR_PUBLIC_KEY"] && pair.publicKey != oldPublic)
        let admitted = try #require(after["BUS_ADMITTED_KEYS"]).split(separator: ",").map(String.init)
        #expect(admitted.contains("operator=\(oldPublic)") && admitted.contains("operator=\(pair.publicKey)"))
        let finished = try Self.rotated("OPERATOR", after, finish: true)
        let left = try #require(finished["BUS_ADMITTED_KEYS"]).split(separator: ",").map(String.init)
        #expect(left.filter { $0.hasPrefix("operator=") } == ["operator=\(pair.publicKey)"])
        #expect(left.count == admitted.count - 1)
    }

    @Test func whatCannotBeRotatedIsRefusedAndTheFileUnchanged() throws {
        let file = try Self.generated()
        for name in ["LEGAL", "AUDIT", "NO_SUCH_KEY"] {
            var copy = file
            #expect(throws: KeyRotation.Refusal.self) { try KeyRotation.rotate(name, in: &copy, finish: false, now: Self.day) }
            #expect(copy.text == file.text)
        }
    }
}
