import Foundation
import Testing

@testable import Bus

@Suite struct ZAPPolicyTests {
    private func request(mechanism: String, key: [UInt8]) -> [Data] {
        ["1.0", "7", "compass", "127.0.0.1", ""].map { Data($0.utf8) } + [Data(mechanism.utf8), Data(key)]
    }

    private func rawKey(_ z85: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = z85.withCString { zmqZ85Decode(&out, $0) }
        return out
    }

    @Test func admitsOnlyListedKeysAndNamesThePeer() throws {
        let gateway = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let policy = ZAPPolicy(admitted: [gateway.publicKey: "gateway"])

        let admitted = policy.reply(to: request(mechanism: "CURVE", key: rawKey(gateway.publicKey)))
        #expect(String(decoding: admitted[2], as: UTF8.self) == "200")
        #expect(String(decoding: admitted[4], as: UTF8.self) == "gateway")
        #expect(admitted[1] == Data("7".utf8))

        let refused = policy.reply(to: request(mechanism: "CURVE", key: rawKey(stranger.publicKey)))
        #expect(String(decoding: refused[2], as: UTF8.self) == "400")
        let plaintext = policy.reply(to: request(mechanism: "NULL", key: []))
        #expect(String(decoding: plaintext[2], as: UTF8.self) == "400")
        #expect(String(decoding: policy.reply(to: [Data("0.9".utf8)])[2], as: UTF8.self) == "500")
    }

    @Test func secretKeyAloneRebuildsThePair() throws {
        let pair = try CurveKeyPair.generate()
        #expect(try CurveKeyPair(secretKey: pair.secretKey) == pair)
        #expect(throws: CurveKeyError.self) { try CurveKeyPair(secretKey: "short") }
    }
}
