import Foundation

extension Date {
    /// Whole milliseconds since 1970, the precision the bus carries. Rounds to the microsecond
    /// first (as PostgreSQL stores times), so a date already on a millisecond never slips to the
    /// one before through floating-point error; then truncates.
    public var millisecondsSince1970: Int64 {
        let micros = Int64((timeIntervalSince1970 * 1_000_000).rounded())
        return micros >= 0 ? micros / 1000 : -((-micros + 999) / 1000)
    }

    /// The instant `milliseconds` after 1970.
    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
