import CivilCalendar
import Foundation

/// Conversions between `Date` and `timestamptz`, which counts microseconds since
/// 2000-01-01 00:00:00 UTC. Dates are rounded to the microsecond, PostgreSQL's precision.
enum PostgresTimestamp {
    /// Seconds from 1970-01-01 to 2000-01-01.
    static let postgresEpoch: Int64 = 946_684_800

    static func date(microsecondsSince2000 micros: Int64) -> Date {
        let seconds = micros.quotientRoundingDown(1_000_000) + postgresEpoch
        let fraction = micros.remainderRoundingDown(1_000_000)
        return Date(timeIntervalSince1970: Double(seconds) + Double(fraction) / 1_000_000)
    }

    /// Microseconds since 1970, rounded to the nearest microsecond.
    static func unixMicroseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, computed without `Calendar` (slow, locale-dependent).
    static func iso8601(_ date: Date) -> String {
        let micros = unixMicroseconds(date)
        let seconds = micros.quotientRoundingDown(1_000_000)
        let fraction = micros.remainderRoundingDown(1_000_000)
        let days = seconds.quotientRoundingDown(86_400)
        let secondOfDay = seconds.remainderRoundingDown(86_400)
        let (year, month, day) = CivilCalendar.date(days: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let yearText = year > 0 ? pad(year, 4) : pad(1 - year, 4)
        return "\(yearText)-\(pad(month, 2))-\(pad(day, 2)) \(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 6))+00"
            + (year > 0 ? "" : " BC")
    }
}

extension Int64 {
    func quotientRoundingDown(_ divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }

    func remainderRoundingDown(_ divisor: Int64) -> Int64 {
        self - quotientRoundingDown(divisor) * divisor
    }
}
