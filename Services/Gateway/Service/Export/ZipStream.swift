import Foundation

/// Writes a ZIP archive front to back, so it can be sent while it is made: each entry is a local
/// header, the bytes as they arrive, then a data descriptor with the CRC-32 computed on the way
/// (general-purpose flag bit 3); the central directory follows the last entry. Entries are
/// stored, not compressed: documents (video, PDF, images) are already compressed, and storing
/// keeps the gateway's work per byte to a CRC. Names are UTF-8 (flag bit 11).
///
/// ZIP64 is used where the classic 32-bit fields would overflow: an entry of 4 GiB or more, an
/// offset past 4 GiB, or more than 65,535 entries (`threshold` lowers the limit for tests).
/// Only what the caller hands over is counted: the caller writes exactly the size it announced.
package struct ZipStream: Sendable {
    private struct Entry: Sendable {
        var name: [UInt8]
        var offset: UInt64
        var size: UInt64
        var crc: UInt32
        var zip64: Bool
    }

    private var entries: [Entry] = []
    private var pending: Entry?
    /// Bytes of the archive produced so far (headers, data, descriptors).
    private(set) var written: UInt64 = 0
    private let time: UInt16
    private let date: UInt16
    private let threshold: UInt64

    /// `modified` is every entry's time (MS-DOS form, local to nothing: written in UTC).
    init(modified: Date, threshold: UInt64 = 0xFFFF_FFFF) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: modified)
        let year = min(max((parts.year ?? 1980) - 1980, 0), 127)
        date = UInt16(year << 9 | (parts.month ?? 1) << 5 | (parts.day ?? 1))
        time = UInt16((parts.hour ?? 0) << 11 | (parts.minute ?? 0) << 5 | (parts.second ?? 0) / 2)
        self.threshold = threshold
    }

    /// The local header of an entry of `size` bytes named `name` (a path with `/` separators).
    mutating func begin(_ name: String, size: UInt64) -> [UInt8] {
        precondition(pending == nil, "the previous entry was not ended")
        let zip64 = size >= threshold
        let entry = Entry(name: Array(name.utf8), offset: written, size: size, crc: 0, zip64: zip64)
        var header = ByteWriter()
        header.u32(0x0403_4B50)
        header.u16(zip64 ? 45 : 20)
        header.u16(Self.flags)
        header.u16(0)  // stored
        header.u16(time)
        header.u16(date)
        header.u32(0)  // CRC-32 and sizes follow in the data descriptor
        header.u32(zip64 ? 0xFFFF_FFFF : 0)
        header.u32(zip64 ? 0xFFFF_FFFF : 0)
        header.u16(UInt16(entry.name.count))
        header.u16(zip64 ? 20 : 0)
        header.bytes(entry.name)
        if zip64 {
            header.u16(0x0001)
            header.u16(16)
            header.u64(0)
            header.u64(0)
        }
        pending = entry
        written += UInt64(header.data.count) + size
        return header.data
    }

    /// The data descriptor ending the entry begun last, whose `size` bytes had this CRC-32.
    mutating func end(crc: UInt32) -> [UInt8] {
        guard var entry = pending else { preconditionFailure("no entry was begun") }
        entry.crc = crc
        pending = nil
        entries.append(entry)
        var descriptor = ByteWriter()
        descriptor.u32(0x0807_4B50)
        descriptor.u32(crc)
        if entry.zip64 {
            descriptor.u64(entry.size)
            descriptor.u64(entry.size)
        } else {
            descriptor.u32(UInt32(entry.size))
            descriptor.u32(UInt32(entry.size))
        }
        written += UInt64(descriptor.data.count)
        return descriptor.data
    }

    /// The central directory and the end records: the archive's last bytes.
    mutating func finish() -> [UInt8] {
        precondition(pending == nil, "the last entry was not ended")
        let start = written
        var out = ByteWriter()
        for entry in entries {
            let bigSize = entry.size >= threshold
            let bigOffset = entry.offset >= threshold
            var extra = ByteWriter()
            if bigSize || bigOffset {
                extra.u16(0x0001)
                extra.u16(UInt16((bigSize ? 16 : 0) + (bigOffset ? 8 : 0)))
                if bigSize {
                    extra.u64(entry.size)
                    extra.u64(entry.size)
                }
                if bigOffset { extra.u64(entry.offset) }
            }
            out.u32(0x0201_4B50)
            out.u16(3 << 8 | 45)  // made by: Unix (so the permissions below apply), spec 4.5
            out.u16(bigSize || bigOffset || entry.zip64 ? 45 : 20)
            out.u16(Self.flags)
            out.u16(0)
            out.u16(time)
            out.u16(date)
            out.u32(entry.crc)
            out.u32(bigSize ? 0xFFFF_FFFF : UInt32(entry.size))
            out.u32(bigSize ? 0xFFFF_FFFF : UInt32(entry.size))
            out.u16(UInt16(entry.name.count))
            out.u16(UInt16(extra.data.count))
            out.u16(0)  // comment
            out.u16(0)  // disk
            out.u16(0)  // internal attributes
            out.u32(0o100644 << 16)  // a regular file, rw-r--r--
            out.u32(bigOffset ? 0xFFFF_FFFF : UInt32(entry.offset))
            out.bytes(entry.name)
            out.bytes(extra.data)
        }
        let directorySize = UInt64(out.data.count)
        let count = UInt64(entries.count)
        let needs64 = count >= min(threshold, 0xFFFF) || start >= threshold || directorySize >= threshold
        if needs64 {
            let record = start + directorySize
            out.u32(0x0606_4B50)
            out.u64(44)
            out.u16(3 << 8 | 45)
            out.u16(45)
            out.u32(0)
            out.u32(0)
            out.u64(count)
            out.u64(count)
            out.u64(directorySize)
            out.u64(start)
            out.u32(0x0706_4B50)
            out.u32(0)
            out.u64(record)
            out.u32(1)
        }
        out.u32(0x0605_4B50)
        out.u16(0)
        out.u16(0)
        out.u16(needs64 ? 0xFFFF : UInt16(count))
        out.u16(needs64 ? 0xFFFF : UInt16(count))
        out.u32(needs64 ? 0xFFFF_FFFF : UInt32(directorySize))
        out.u32(needs64 ? 0xFFFF_FFFF : UInt32(start))
        out.u16(0)
        written += UInt64(out.data.count)
        return out.data
    }

    /// Sizes and CRC in the data descriptor; names in UTF-8.
    private static let flags: UInt16 = 0x0008 | 0x0800
}

/// Little-endian fields, appended.
private struct ByteWriter {
    var data: [UInt8] = []
    mutating func u16(_ value: UInt16) { data.append(contentsOf: [UInt8(value & 0xFF), UInt8(value >> 8)]) }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { data.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { data.append(UInt8((value >> UInt64(shift)) & 0xFF)) } }
    mutating func bytes(_ bytes: [UInt8]) { data.append(contentsOf: bytes) }
}
