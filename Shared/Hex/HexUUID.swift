import Foundation

extension Hex {
    /// The canonical 36-character text of `id`: lower case by default, or exactly
    /// `UUID.uuidString` when `uppercase`. Foundation on Linux formats `uuidString` with `sprintf`,
    /// a visible cost where every request or row writes ids (parameters, `COPY` rows, keys).
    public static func uuid(_ id: UUID, uppercase: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(36)
        appendUUID(id, uppercase: uppercase, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the canonical text of `id` (see ``uuid(_:uppercase:)``) to `out`.
    public static func appendUUID(_ id: UUID, uppercase: Bool = false, to out: inout [UInt8]) {
        let letters = uppercase ? UInt8(ascii: "A") - 10 : UInt8(ascii: "a") - 10
        func digit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : letters + nibble }
        withUnsafeBytes(of: id.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
                out.append(digit(byte >> 4))
                out.append(digit(byte & 0x0f))
            }
        }
    }
}
