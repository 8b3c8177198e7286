import Postgres
import TestSupport
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    @Test("FIPS 180-4 test vectors")
    func vectors() {
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("agrees with PostgreSQL's sha256() at every length around the block boundaries")
    func matchesServer() async throws {
        try await TestDatabase.withSchema { db in
            let inputs = (0..<200).map { length in (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ length) } }
            let server = try await db.pool.withConnection { c in
                try inputs.map { try c.query("SELECT encode(sha256($1), 'hex')", $0)[0].decode(String.self, column: 0) }
            }
            #expect(server == inputs.map { SHA256.hex($0) })
        }
    }
}
