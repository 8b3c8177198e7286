import Bus
import Foundation

/// W3C Trace Context (`traceparent: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`).
///
/// A valid incoming header keeps its trace id and flags, so the gateway's bus calls join the
/// caller's trace; anything else (absent, malformed, all-zero ids, an unknown version's short
/// form) starts a new trace. Either way this request gets a span id of its own.
package struct TraceContext: Sendable, Equatable {
    let traceID: String
    let spanID: String
    let flags: String

    init(incoming header: String?) {
        spanID = Self.randomHex(bytes: 8)
        if let header, let parsed = Self.parse(header) {
            traceID = parsed.traceID
            flags = parsed.flags
        } else {
            traceID = Self.randomHex(bytes: 16)
            flags = "01"
        }
    }

    var header: String { "00-\(traceID)-\(spanID)-\(flags)" }

    static func parse(_ header: String) -> (traceID: String, flags: String)? {
        let parts = header.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, isHex(parts[0]), parts[0] != "ff",
            parts[1].count == 32, isHex(parts[1]), parts[1] != Substring(String(repeating: "0", count: 32)),
            parts[2].count == 16, isHex(parts[2]), parts[2] != Substring(String(repeating: "0", count: 16)),
            parts[3].count == 2, isHex(parts[3])
        else { return nil }
        // Version 00 has exactly four parts; later versions may append more.
        if parts[0] == "00", parts.count != 4 { return nil }
        return (String(parts[1]), String(parts[3]))
    }

    static func isHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func randomHex(bytes count: Int) -> String { MessageID.randomHex(bytes: count) }
}
