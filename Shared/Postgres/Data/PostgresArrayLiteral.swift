import Hex

/// PostgreSQL array literals (`{"a","b"}`) for passing a whole column of values as one text
/// parameter, cast in SQL (`unnest($1::uuid[])`): one statement for a batch instead of one per row.
/// Every element is quoted and `"` and `\` are escaped, so any text travels unchanged; nil becomes
/// an unquoted `NULL`.
public enum PostgresArrayLiteral {
    /// Built as UTF-8 bytes, not by appending `Unicode.Scalar`s to a `String`: a batch's records
    /// go as fourteen of these, and scalar by scalar they were a quarter of Audit's CPU under load.
    /// `"` and `\` are ASCII, so they cannot occur inside a multi-byte character and escaping byte
    /// by byte is exact.
    public static func of(_ values: [String?]) -> String {
        literal(values, capacity: 40) { literal, value in
            var value = value
            literal.append(UInt8(ascii: "\""))
            value.withUTF8 { text in
                for byte in text {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
                    literal.append(byte)
                }
            }
            literal.append(UInt8(ascii: "\""))
        }
    }

    public static func of(_ values: [String]) -> String { of(values.map(Optional.some)) }

    /// A `bytea[]` literal: each value in bytea's hex text form (`\x` and two digits a byte),
    /// quoted, its backslash escaped. Written straight into the literal: made as a `String` per
    /// value and then escaped, four of these per batch were 3% of Audit's CPU.
    public static func of(bytea values: [[UInt8]?]) -> String {
        literal(values, capacity: 7 + 2 * (values.first??.count ?? 32)) { literal, value in
            literal.append(contentsOf: #""\\x"#.utf8)
            for byte in value { Hex.append(byte, to: &literal) }
            literal.append(UInt8(ascii: "\""))
        }
    }

    /// `{a,b,…}` with `NULL` for nil and `element` writing each value.
    private static func literal<Value>(_ values: [Value?], capacity: Int, _ element: (inout [UInt8], Value) -> Void) -> String {
        var literal: [UInt8] = []
        literal.reserveCapacity(2 + values.count * capacity)
        literal.append(UInt8(ascii: "{"))
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            if let value { element(&literal, value) } else { literal.append(contentsOf: "NULL".utf8) }
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }
}
