/// PostgreSQL array literals (`{"a","b"}`) for passing a whole column of values as one text
/// parameter, cast in SQL (`unnest($1::uuid[])`): one statement for a batch instead of one per row.
/// Every element is quoted and `"` and `\` are escaped, so any text travels unchanged; nil becomes
/// an unquoted `NULL`.
public enum PostgresArrayLiteral {
    public static func of(_ values: [String?]) -> String {
        var literal = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { literal += "," }
            guard let value else {
                literal += "NULL"
                continue
            }
            literal += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { literal.unicodeScalars.append("\\") }
                literal.unicodeScalars.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    public static func of(_ values: [String]) -> String { of(values.map(Optional.some)) }
}
