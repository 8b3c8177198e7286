import CivilCalendar
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// RFC 3339 timestamps in UTC with milliseconds (`2026-11-22T03:10:00.123Z`), the form every
/// time on the bus takes. Written by hand because it is formatted and parsed on every message.
public enum Timestamp {
    public static func format(_ date: Date) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        append(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the text of `date` to `out` (no intermediate strings: this runs per message).
    public static func append(_ date: Date, to out: inout [UInt8]) {
        let millisTotal = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = millisTotal >= 0 ? millisTotal / 1000 : (millisTotal - 999) / 1000
        let millis = Int(millisTotal - seconds * 1000)
        let parts = civil(seconds)
        func digits(_ value: Int32, _ width: Int) {
            var divisor: Int32 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4)
        out.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2)
        out.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2)
        out.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2)
        out.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2)
        out.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2)
        out.append(UInt8(ascii: "."))
        digits(Int32(millis), 3)
        out.append(UInt8(ascii: "Z"))
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `nil` when the text is not of that form.
    public static func parse(_ text: String) -> Date? { parse(bytes: Array(text.utf8)) }

    static func parse(bytes: [UInt8]) -> Date? { bytes.withUnsafeBufferPointer { parse(buffer: $0) } }

    /// The parser itself, on borrowed bytes (the envelope decoder passes a slice of the frame).
    static func parse(buffer bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count >= 20 else { return nil }
        func number(_ start: Int, _ count: Int) -> Int32? {
            var value: Int32 = 0
            for i in start..<start + count {
                guard i < bytes.count, (48...57).contains(bytes[i]) else { return nil }
                value = value * 10 + Int32(bytes[i] - 48)
            }
            return value
        }
        guard bytes[4] == 45, bytes[7] == 45, bytes[10] == 84 || bytes[10] == 116, bytes[13] == 58, bytes[16] == 58,
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (48...57).contains(bytes[index]) {
                fraction += Double(bytes[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offsetSeconds = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case 90, 122: index += 1
        case 43, 45:
            guard let hours = number(index + 1, 2), bytes.count > index + 3, bytes[index + 3] == 58,
                let minutes = number(index + 4, 2)
            else { return nil }
            offsetSeconds = Int(hours) * 3600 + Int(minutes) * 60
            if bytes[index] == 45 { offsetSeconds = -offsetSeconds }
            index += 6
        default: return nil
        }
        guard index == bytes.count else { return nil }
        let seconds =
            days(year: Int64(year), month: Int64(month), day: Int64(day)) * 86400
            + Int64(hour) * 3600 + Int64(minute) * 60 + Int64(second)
        return Date(timeIntervalSince1970: Double(seconds - Int64(offsetSeconds)) + fraction)
    }

    // MARK: Civil calendar arithmetic (``CivilCalendar``, shared with PostgreSQL's timestamps)
    // `gmtime_r`/`timegm` normalise through glibc's general time code; this runs 3–4 times per
    // call. The results are the same, overflowing fields (day 31 of February, second 60) included.

    /// Days since 1970-01-01 of a civil date; `day` past the month's end runs into the next one.
    static func days(year: Int64, month: Int64, day: Int64) -> Int64 { CivilCalendar.days(year: year, month: month, day: day) }

    /// The UTC calendar fields of `seconds` since the epoch, in `tm`'s conventions.
    static func civil(_ seconds: Int64) -> tm {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        let (year, month, day) = CivilCalendar.date(days: days)
        var parts = tm()
        parts.tm_year = Int32(truncatingIfNeeded: year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(secondOfDay / 3600)
        parts.tm_min = Int32(secondOfDay / 60 % 60)
        parts.tm_sec = Int32(secondOfDay % 60)
        return parts
    }
}
