import Foundation
import Hex
import Locks

#if canImport(Glibc)
    import Glibc
#endif

/// Fast UUIDs for message ids. Foundation's `UUID()` on Linux opens and reads `/dev/urandom` on
/// every call, and its text form goes through `sprintf`/`sscanf`; on the bus, where every message
/// makes and parses ids, that was the largest single cost. These are the same random (v4) UUIDs,
/// from the system CSPRNG (`getrandom`), read 4 KiB at a time (see ``RandomPool``).
public enum MessageID {
    public static func make() -> UUID {
        let (high, low) = RandomPool.shared.withLock { $0.nextPair() }
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
            return UUID(
                uuid: (
                    raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                    raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
                ))
        }
    }

    /// `count` random bytes from the same pool as lowercase hex: W3C trace and span ids, without a
    /// system call per id (`SystemRandomNumberGenerator` made one per byte).
    public static func randomHex(bytes count: Int) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(count * 2 + 16)
        while out.count < count * 2 {
            let (high, low) = RandomPool.shared.withLock { $0.nextPair() }
            for word in [high, low] {
                for shift in stride(from: 60, through: 0, by: -4) { out.append(Hex.digit(UInt8((word >> UInt64(shift)) & 0xf))) }
            }
        }
        return String(decoding: out.prefix(count * 2), as: UTF8.self)
    }

    public static func text(of id: UUID) -> String { Hex.uuid(id) }

    /// A UUID in canonical text (36 characters, either case), as `UUID(uuidString:)` reads it but
    /// without its 16 `sscanf` calls on Linux: for ids on hot paths (a request's path, a token's
    /// claims).
    public static func parse(_ text: some StringProtocol) -> UUID? {
        var text = String(text)  // a String's bytes are contiguous, and a String argument is not copied
        return text.withUTF8 { parse($0) }
    }

    /// ``parse(_:)`` of bytes (an envelope field).
    static func parse(_ bytes: ArraySlice<UInt8>) -> UUID? { bytes.withUnsafeBufferPointer { parse($0) } }

    /// Parses canonical UUID text (either case); `nil` for anything else. Accumulates into two
    /// integers: no array per id (every message parses one or two). Concrete over a buffer, not
    /// generic over the text's type: called across modules, a generic loop ran unspecialised
    /// (type metadata and witness look-ups per character: 4.6% of the gateway's CPU in a profile).
    static func parse(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var nibbles = 0
        for position in 0..<36 {
            let character = text[position]
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if nibbles < 16 { high = high << 4 | UInt64(nibble) } else { low = low << 4 | UInt64(nibble) }
            nibbles += 1
        }
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeBytes(of: &bytes) { raw in
            UUID(
                uuid: (
                    raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                    raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
                ))
        }
    }
}

/// CSPRNG output read ahead in 4 KiB blocks: one `getrandom` call per 256 ids instead of one per
/// id (the syscall and the kernel's per-call ChaCha setup were about 6% of a round trip's CPU).
/// The bytes are the kernel's, unchanged, and each is handed out once.
struct RandomPool: ~Copyable {
    static let shared = LockedValue(RandomPool())

    private var words = [UInt64](repeating: 0, count: 512)
    private var next = 512

    mutating func nextPair() -> (UInt64, UInt64) {
        if next + 2 > words.count { refill() }
        defer { next += 2 }
        return (words[next], words[next + 1])
    }

    private mutating func refill() {
        // glibc's arc4random_buf is one `getrandom` call for the whole block (glibc 2.36+).
        words.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        next = 0
    }
}
