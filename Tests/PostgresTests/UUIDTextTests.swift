import Foundation
import Hex
import Postgres
import Testing

/// `Hex.uuid` replaces Foundation's `uuidString` (formatted with `sprintf` on Linux) wherever ids
/// become text on a hot path: it must write exactly the same characters.
@Suite struct UUIDTextTests {
    @Test func writesWhatUUIDStringWritesInEitherCase() {
        var ids = (0..<5_000).map { _ in UUID() }
        ids.append(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        ids.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        for id in ids {
            #expect(Hex.uuid(id, uppercase: true) == id.uuidString)
            #expect(Hex.uuid(id) == id.uuidString.lowercased())
            #expect(id.postgresParameter.bytes == Array(id.uuidString.utf8))
        }
    }

    /// `Hex.bytes` reads back what `Hex.string` writes, and nothing else: odd lengths, upper case
    /// and other characters are refused (receipt proofs are read with it).
    @Test func hexReadsBackWhatItWritesAndRefusesTheRest() {
        for length in [0, 1, 2, 31, 32, 33] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255) }
            #expect(Hex.bytes(Hex.string(bytes)) == bytes)
        }
        #expect(Hex.bytes("00ff7a") == [0x00, 0xff, 0x7a])
        for bad in ["0", "abc", "AB", "0g", "zz", " 0", "0x00", "é0"] { #expect(Hex.bytes(bad) == nil, "\(bad)") }
    }
}
