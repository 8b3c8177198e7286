import Bus
import Contracts
import Crypto
import Foundation

/// The rules a `legal.publish` request must meet before anything is written. Each failure is a
/// ``BusError`` whose message says what to fix.
public enum PublishValidation {
    /// How far in the past `effectiveAt` may lie (clock skew between the operator and the
    /// database). A legal text cannot take effect retroactively: nobody could have read it then.
    public static let retroactivityTolerance: TimeInterval = 300

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
}
