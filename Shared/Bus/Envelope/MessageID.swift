import Foundation

/// Fast UUIDs for message ids. Foundation's `UUID()` on Linux opens and reads `/dev/urandom` on
/// every call, and its text form goes through `sprintf`/`sscanf`; on the bus, where every message
/// makes and parses ids, that was the largest single cost. These are the same random (v4) UUIDs,
/// from the system CSPRNG (`getrandom`).
public enum MessageID {
    public static func make() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
            return UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                               raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends the canonical lower-case text (36 bytes) of `id` to `out`.
    static func appendText(of id: UUID, to out: inout [UInt8]) {
        withUnsafeBytes(of: id.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    public static func text(of id: UUID) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(36)
        appendText(of: id, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses canonical UUID text (either case); `nil` for anything else.
    static func parse<Bytes: Collection<UInt8>>(_ text: Bytes) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        var byteIndex = 0
        var high: UInt8?
        for (position, character) in text.enumerated() {
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
            if let first = high {
                bytes[byteIndex] = first << 4 | nibble
                byteIndex += 1
                high = nil
            } else {
                high = nibble
            }
        }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
