import Bus
import Foundation

extension UUID {
    /// A version-7 UUID for an Audit record Accounts streams: 48 bits of Unix milliseconds, then
    /// random bits (the bus's buffered CSPRNG reader). Audit keeps the id, so records' ids still
    /// sort by time and their index grows at its right edge.
    static func timeOrdered(at date: Date = Date()) -> UUID {
        let milliseconds = date.millisecondsSince1970
        var bytes = MessageID.make().uuid
        withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
            raw[6] = (raw[6] & 0x0f) | 0x70
            raw[8] = (raw[8] & 0x3f) | 0x80
        }
        return UUID(uuid: bytes)
    }
}
