import Bus
import Foundation

extension UUID {
    /// A version-7 UUID: 48 bits of Unix milliseconds, then random bits (from the bus's buffered
    /// CSPRNG reader). Record ids sort by time, so their index grows at its right edge instead of
    /// splitting pages all over.
    static func timeOrdered(milliseconds: Int64) -> UUID {
        var bytes = MessageID.make().uuid
        withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
            raw[6] = (raw[6] & 0x0f) | 0x70
            raw[8] = (raw[8] & 0x3f) | 0x80
        }
        return UUID(uuid: bytes)
    }
}
