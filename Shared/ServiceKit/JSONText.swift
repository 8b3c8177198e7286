/// Minimal JSON text building for log lines and health bodies, where the key order is chosen by us
/// and `JSONEncoder` would add allocation and ordering surprises.
enum JSONText {
    /// `text` as a JSON string literal, quotes included, with control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A JSON object from already-encoded values, keeping the order given.
    static func object(_ members: [(key: String, encodedValue: String)]) -> String {
        "{" + members.map { quoted($0.key) + ":" + $0.encodedValue }.joined(separator: ",") + "}"
    }
}
