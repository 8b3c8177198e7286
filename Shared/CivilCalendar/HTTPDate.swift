/// HTTP's date format, IMF-fixdate (RFC 9110 §5.6.7: `Fri, 27 Nov 2026 12:15:04 GMT`), in whole
/// seconds since 1970, formatted and read with ``CivilCalendar``: no `DateFormatter` (not
/// Sendable, and costly to make per call) and no locale. The gateway's tus `Upload-Expires` and
/// the S3 client's `Last-Modified` both use it.
public enum HTTPDate {
    static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate of `seconds` since 1970 (a fraction is dropped, towards the past).
    public static func format(secondsSince1970 seconds: Double) -> String {
        let whole = Int64(seconds.rounded(.down))
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let time = whole - days * 86_400
        let (year, month, day) = CivilCalendar.date(days: days)
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        return "\(weekday), \(two(day)) \(months[Int(month - 1)]) \(four(year)) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }

    /// Seconds since 1970 of an IMF-fixdate; `nil` for anything else (the obsolete RFC 850 and
    /// asctime forms are not sent by the servers this talks to). The weekday is not checked.
    public static func parse(_ text: String) -> Int64? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].count == 4, fields[0].last == ",", fields[5] == "GMT",
            let day = Int64(fields[1]), let monthIndex = months.firstIndex(of: String(fields[2])), let year = Int64(fields[3])
        else { return nil }
        let time = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard time.count == 3, let hour = Int64(time[0]), let minute = Int64(time[1]), let second = Int64(time[2]),
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = CivilCalendar.days(year: year, month: Int64(monthIndex + 1), day: day)
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    private static func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
    private static func four(_ value: Int64) -> String {
        let text = "\(value)"
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }
}
