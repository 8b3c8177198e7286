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
}
