import Foundation
import TestSupport
import Testing

@testable import GatewayService

/// The export's ZIP writer on its own: archives read back by the tests' reader and by Python's
/// `zipfile`, in classic form and with ZIP64 forced (a low threshold stands for the 4 GiB
/// limits, which are too large to write in a test).
@Suite struct ZipStreamTests {
    static func archive(_ files: [(String, Data)], threshold: UInt64 = 0xFFFF_FFFF) -> Data {
        var zip = ZipStream(modified: Date(timeIntervalSince1970: 1_768_435_200), threshold: threshold)
        var out: [UInt8] = []
        for (name, data) in files {
            out += zip.begin(name, size: UInt64(data.count))
            // The bytes arrive in pieces, as document chunks do.
            var crc = CRC32()
            for start in stride(from: 0, to: data.count, by: 7) {
                let piece = data[start..<min(data.count, start + 7)]
                crc.update(piece)
                out += piece
            }
            out += zip.end(crc: crc.value)
        }
        out += zip.finish()
        #expect(zip.written == UInt64(out.count))
        return Data(out)
    }

    static let files: [(String, Data)] = [
        ("README.txt", Data("hello\n".utf8)), ("documents/é/naïve file.pdf", Data((0..<1000).map { UInt8($0 % 251) })),
        ("empty", Data()), ("manifest.json", Data("{}".utf8)),
    ]

    @Test(arguments: [UInt64(0xFFFF_FFFF), 8, 1])
    func readsBackWithEveryEntryIntact(threshold: UInt64) async throws {
        let data = Self.archive(Self.files, threshold: threshold)
        let entries = try ZipReader.entries(of: data)
        #expect(entries.map(\.name) == Self.files.map(\.0))
        #expect(entries.map(\.data) == Self.files.map(\.1))
        try await ZipReader.checkWithUnzip(data)
    }

    @Test func crcMatchesKnownValuesAndTheBitwiseForm() {
        #expect(CRC32.of(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.of([UInt8]()) == 0)
        let data = Data((0..<4096).map { UInt8(($0 * 31) % 256) })
        #expect(CRC32.of(data) == ZipReader.bitwiseCRC(data))
        // Updated in uneven pieces (the 8-byte steps and the byte-wise tail meet anywhere).
        let odd = Data((0..<4099).map { UInt8(($0 * 131 + 7) % 256) })
        for cut in [0, 1, 7, 8, 9, 2050, 4098] {
            var crc = CRC32()
            crc.update(odd[0..<cut])
            crc.update(odd[cut...])
            #expect(crc.value == ZipReader.bitwiseCRC(odd), "split at \(cut)")
        }
    }

    @Test func aDamagedArchiveIsRefused() async throws {
        var data = Self.archive(Self.files)
        data[40] ^= 0xFF  // inside README.txt's bytes
        let damaged = #expect(throws: TestSupportError.self) { try ZipReader.entries(of: data) }
        #expect(damaged?.description == "CRC of README.txt does not match")
        let refused = await #expect(throws: TestSupportError.self) { try await ZipReader.checkWithUnzip(data) }
        #expect(refused?.description == "python3 zipfile refused the archive (1)")
        // Cut short (a stream that ended mid-way): no central directory.
        let cut = #expect(throws: TestSupportError.self) { try ZipReader.entries(of: Self.archive(Self.files).prefix(300)) }
        #expect(cut?.description == "no end of central directory")
    }
}
