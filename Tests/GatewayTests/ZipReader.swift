import Foundation
import TestSupport

/// A ZIP reader for the tests, written apart from the gateway's writer: it walks the central
/// directory (ZIP64 end records and extra fields included), checks each local header and data
/// descriptor against it and each entry's CRC-32 (computed bit by bit, not with the writer's table).
enum ZipReader {
    struct Entry {
        let name: String
        let data: Data
    }

    static func entries(of archive: Data) throws -> [Entry] {
        let bytes = [UInt8](archive)
        func u16(_ at: Int) -> UInt64 { UInt64(bytes[at]) | UInt64(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt64 { u16(at) | u16(at + 2) << 16 }
        func u64(_ at: Int) -> UInt64 { u32(at) | u32(at + 4) << 32 }
        guard bytes.count >= 22, let end = stride(from: bytes.count - 22, through: 0, by: -1).first(where: { u32($0) == 0x0605_4B50 }) else {
            throw TestSupportError("no end of central directory")
        }
        var count = u16(end + 10)
        var directory = u32(end + 16)
        if end >= 20, u32(end - 20) == 0x0706_4B50 {
            let record = Int(u64(end - 20 + 8))
            guard u32(record) == 0x0606_4B50 else { throw TestSupportError("ZIP64 locator points at no record") }
            count = u64(record + 32)
            directory = u64(record + 48)
        }
        var entries: [Entry] = []
        var at = Int(directory)
        for _ in 0..<count {
            guard u32(at) == 0x0201_4B50 else { throw TestSupportError("bad central header at \(at)") }
            let flags = u16(at + 8)
            guard u16(at + 10) == 0 else { throw TestSupportError("not stored") }
            let crc = UInt32(u32(at + 16))
            var size = u32(at + 24)
            let (nameLength, extraLength, commentLength) = (Int(u16(at + 28)), Int(u16(at + 30)), Int(u16(at + 32)))
            var offset = u32(at + 42)
            let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            var extra = at + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra < extraEnd {
                let (id, length) = (u16(extra), Int(u16(extra + 2)))
                if id == 1 {
                    var field = extra + 4
                    if size == 0xFFFF_FFFF {
                        size = u64(field)
                        field += 16
                    }
                    if offset == 0xFFFF_FFFF { offset = u64(field) }
                }
                extra += 4 + length
            }
            let local = Int(offset)
            guard u32(local) == 0x0403_4B50, u16(local + 26) == UInt64(nameLength) else { throw TestSupportError("bad local header of \(name)") }
            let start = local + 30 + Int(u16(local + 26)) + Int(u16(local + 28))
            let data = Data(bytes[start..<(start + Int(size))])
            guard bitwiseCRC(data) == crc else { throw TestSupportError("CRC of \(name) does not match") }
            if flags & 8 != 0 {
                let descriptor = start + Int(size)
                guard u32(descriptor) == 0x0807_4B50, UInt32(u32(descriptor + 4)) == crc else {
                    throw TestSupportError("bad data descriptor of \(name)")
                }
            }
            entries.append(Entry(name: name, data: data))
            at += 46 + nameLength + extraLength + commentLength
        }
        return entries
    }

    static func bitwiseCRC(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }

    /// Python's `zipfile` (another implementation again) opens the archive and checks every CRC.
    static func checkWithUnzip(_ archive: Data) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).zip")
        try archive.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); bad = z.testzip(); sys.exit(1 if bad else 0)", file.path,
        ]
        try process.run()
        await process.exited()
        guard process.terminationStatus == 0 else { throw TestSupportError("python3 zipfile refused the archive (\(process.terminationStatus))") }
    }
}
