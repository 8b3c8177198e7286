import Bus
import Contracts
import Crypto
import Foundation

/// The rules a `legal.publish` request must meet before anything is written. Each failure is a
/// ``BusError`` whose message says what to fix.
public enum PublishValidation {
    /// Longest version string: enough for `2026.01.15-rc.2`, short enough for a page header.
    public static let maximumVersionLength = 32
    /// How far in the past `effectiveAt` may lie (clock skew between the operator and the
    /// database). A legal text cannot take effect retroactively: nobody could have read it then.
    public static let retroactivityTolerance: TimeInterval = 300

    /// A version string is 1–32 characters of `A-Z a-z 0-9 . _ -`, starting with a letter or
    /// digit: it appears in URLs, file names and acceptance records, so nothing needs escaping.
    public static func checkVersion(_ version: String) throws(BusError) {
        guard !version.isEmpty else { throw BusError(.invalidArgument, "version is empty") }
        guard version.utf8.count <= maximumVersionLength else {
            throw BusError(.invalidArgument, "version is longer than \(maximumVersionLength) characters")
        }
        guard let first = version.utf8.first, isAlphanumeric(first),
            version.utf8.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw BusError(
                .invalidArgument, "version \"\(version)\" may hold only letters, digits, '.', '_' and '-', starting with a letter or digit")
        }
    }

    /// Content is markdown text: not blank, at most ``legalMaximumContentBytes`` bytes of UTF-8
    /// (`payload_too_large` beyond), and free of control characters other than tab, line feed and
    /// carriage return (a NUL cannot even be stored; the others mean binary pasted by mistake).
    /// UTF-8 validity itself is guaranteed earlier: a request whose JSON is not valid UTF-8 fails
    /// to decode and is answered `invalid_argument`.
    public static func checkContent(_ content: String) throws(BusError) {
        let size = content.utf8.count
        guard size <= legalMaximumContentBytes else {
            throw BusError(.payloadTooLarge, "content is \(size) bytes; at most \(legalMaximumContentBytes) are accepted")
        }
        guard !isBlank(content) else { throw BusError(.invalidArgument, "content is empty") }
        // Every forbidden character is ASCII, and in UTF-8 an ASCII byte is always that character:
        // a byte scan finds them without decoding (1 MiB in well under a millisecond).
        if let bad = content.utf8.first(where: { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) || $0 == 0x7F }) {
            throw BusError(.invalidArgument, "content holds control character U+\(String(format: "%04X", bad)); markdown text only")
        }
    }

    /// Whether `content` is nothing but whitespace (Unicode's, so a no-break space counts).
    static func isBlank(_ content: String) -> Bool {
        // Usually the first byte settles it; decoding starts only at the first non-ASCII-space byte.
        let asciiSpaces: Set<UInt8> = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20]
        guard let start = content.utf8.firstIndex(where: { !asciiSpaces.contains($0) }) else { return true }
        return !content.unicodeScalars[start...].contains { !$0.properties.isWhitespace }
    }

    /// Lower-case hex SHA-256 of the UTF-8 bytes: what an acceptance is bound to.
    public static func digest(of content: String) -> String {
        SHA256.hash(data: Array(content.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
