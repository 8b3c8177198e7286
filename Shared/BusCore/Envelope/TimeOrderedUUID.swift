import Foundation

extension UUID {
    /// A version-7 UUID: 48 bits of Unix milliseconds, then random bits from ``MessageID``'s pool.
    /// Ids made this way sort by time, so an index on them grows at its right edge instead of
    /// splitting pages all over. Accounts makes an acceptance's record id with it and Audit keeps
    /// that id; Audit makes the ids of the records it is the first to write.
    public static func timeOrdered(milliseconds: Int64) -> UUID {
        var bytes = MessageID.make().uuid
        withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
            raw[6] = (raw[6] & 0x0f) | 0x70
            raw[8] = (raw[8] & 0x3f) | 0x80
        }
        return UUID(uuid: bytes)
    }

    /// ``timeOrdered(milliseconds:)`` at `date`.
    public static func timeOrdered(at date: Date = Date()) -> UUID {
        timeOrdered(milliseconds: date.millisecondsSince1970)
    }
}
