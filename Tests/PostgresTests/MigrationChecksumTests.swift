import Hex
import Postgres
import TestSupport
import Testing

/// Migration checksums are SHA-256 hex of the file (swift-crypto's, through ``Hex``). Databases
/// migrated by earlier releases hold checksums from a hand-written SHA-256 that agreed with
/// PostgreSQL's `sha256()`; agreeing with the server here is what keeps those valid.
@Suite("Migration checksums")
struct MigrationChecksumTests {
    @Test("lower-case hex, two digits a byte")
    func hex() {
        #expect(Hex.string([UInt8]()) == "")
        #expect(Hex.string([0x00, 0x09, 0x0a, 0x0f, 0x10, 0xab, 0xff]) == "00090a0f10abff")
        #expect(Hex.string((0...255).map { UInt8($0) }).count == 512)
    }

    @Test("FIPS 180-4 test vectors")
    func vectors() {
        func checksum(_ sql: String) -> String { Migration(version: 1, name: "0001_x", sql: sql).checksum }
        #expect(checksum("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(checksum("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            checksum("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// `length` printable ASCII bytes, then a two-byte "é" (so UTF-8 is exercised too).
    static func text(length: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for index in 0..<length { scalars.append(Unicode.Scalar(UInt8(32 + (index * 7 + length) % 90))) }
        return String(scalars) + "é"
    }

    @Test("agrees with PostgreSQL's sha256() at every length around the block boundaries")
    func matchesServer() async throws {
        try await TestDatabase.withSchema { db in
            let inputs = (0..<200).map(Self.text(length:))
            let server = try await db.pool.withConnection { c in
                try inputs.map { try c.query("SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')", $0)[0].decode(String.self, column: 0) }
            }
            #expect(server == inputs.map { Migration(version: 1, name: "0001_x", sql: $0).checksum })
        }
    }
}
