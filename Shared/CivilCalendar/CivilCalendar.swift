/// Civil-calendar arithmetic (Howard Hinnant's `days_from_civil` and `civil_from_days`):
/// proleptic Gregorian dates in UTC as day counts since 1970-01-01 and back, with no libc call.
///
/// The bus's timestamps and PostgreSQL's text timestamps both format and parse instants several
/// times per request; `gmtime_r`/`timegm` go through glibc's general time code. One home for the
/// arithmetic, so the two formats cannot disagree about a date. Results equal libc's, overflowing
/// fields (day 31 of February) included: checked in `Tests/BusTests` against libc over random instants.
public enum CivilCalendar {
    /// Days since 1970-01-01 of a civil date; `day` past the month's end runs into the next month.
    @inlinable
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date (`month` 1–12, `day` 1–31) of a day count since 1970-01-01.
    @inlinable
    public static func date(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
