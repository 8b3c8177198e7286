import BusCore

/// What a legal document's version string may be: 1–32 characters of `A-Z a-z 0-9 . _ -`,
/// starting with a letter or digit. Legal refuses to publish anything else, so Accounts and Audit
/// refuse anything else too (`invalid_argument`) before they look the version up: a version that
/// could never have been published is a malformed request, not a stale one.
public enum LegalVersionRule {
    /// Enough for `2026.01.15-rc.2`, short enough for a page header. It appears in URLs, file
    /// names and acceptance records, so nothing in it needs escaping.
    public static let maximumLength = 32

    /// `invalid_argument` naming `field` when `version` breaks the rule.
    public static func check(_ version: String, field: String = "version") throws(BusError) {
        guard !version.isEmpty else { throw BusError(.invalidArgument, "\(field) is empty") }
        guard version.utf8.count <= maximumLength else {
            throw BusError(.invalidArgument, "\(field) is longer than \(maximumLength) characters")
        }
        guard let first = version.utf8.first, isAlphanumeric(first),
            version.utf8.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw BusError(
                .invalidArgument, "\(field) \"\(version)\" may hold only letters, digits, '.', '_' and '-', starting with a letter or digit")
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
