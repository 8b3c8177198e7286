/// Lower-case hexadecimal: the one way this project writes bytes as text (digests, ids, trace
/// ids, `bytea` in COPY, JSON `\u` escapes). Inlinable and table-free, so the envelope's hot
/// paths (message ids) pay nothing for sharing it.
public enum Hex {
    /// The digit for a value 0…15.
    @inlinable
    public static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }

    /// Appends the two digits of `byte` to `out`.
    @inlinable
    public static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digit(byte >> 4))
        out.append(digit(byte & 0x0f))
    }

    /// `bytes` as lower-case hex text, two digits a byte.
    @inlinable
    public static func string(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes { append(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` spells in lower-case hex, two digits a byte; nil for any other text
    /// (upper case included: this project writes only lower case, and a reader accepting both
    /// would let two texts stand for one value).
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for character in utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                out.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return out
    }
}
