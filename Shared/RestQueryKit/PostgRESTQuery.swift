import BusCore
import Foundation

/// PostgREST's query language, the part this gateway supports, parsed without looking at any
/// table: `select` (a column list or `*`), `column=[not.]op.value` filters with `eq neq gt gte
/// lt lte like ilike in is`, `or=(…)`/`and=(…)`/`not.or=(…)`/`not.and=(…)` nested as PostgREST
/// nests them (`or=(a.eq.1,and(b.gt.2,c.is.null))`, values double-quoted where they hold `,` or
/// `)`), `order=col.asc|desc.nullsfirst|nullslast,…`, `limit`, `offset`. Anything else
/// (other operators, embedding, casts, JSON paths) is PostgREST's parse error PGRST100 (400),
/// never guessed at. ``restQuery(for:range:count:)`` then checks it against a table.
package struct PostgRESTQuery: Sendable, Equatable {
    package var select: [String]?
    package var filters: [RestFilter] = []
    package var order: [RestOrder] = []
    package var limit: Int?
    package var offset = 0

    /// Operators PostgREST has that this gateway does not: named in the error, so the client
    /// knows it is this server's limit and not a typo.
    static let unsupportedOperators: Set<String> = [
        "cs", "cd", "ov", "sl", "sr", "nxr", "nxl", "adj", "fts", "plfts", "phfts", "wfts", "match", "imatch", "isdistinct",
    ]

    /// Parses a raw query string (`select=content,version&type=eq.terms_of_service`).
    package init(rawQuery: String?) throws(RestQueryError) {
        for pair in (rawQuery ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try Self.decode(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1]) : ""
            switch key {
            case "select":
                select = try Self.parseSelect(value)
            case "order":
                order = try Self.parseOrder(value)
            case "limit":
                guard let number = Int(value), number >= 0 else { throw .badQuery("failed to parse limit (\(value))") }
                limit = number
            case "offset":
                guard let number = Int(value), number >= 0 else { throw .badQuery("failed to parse offset (\(value))") }
                offset = number
            case "or", "and", "not.or", "not.and":
                var parser = LogicTreeParser(value)
                let members = try parser.list(depth: 1)
                guard parser.atEnd else { throw .badQuery("failed to parse logic tree (\(value))", details: "unexpected text after the closing )") }
                filters.append(.group(RestGroup(key.hasSuffix("or") ? .or : .and, negated: key.hasPrefix("not."), members)))
            case "on_conflict", "columns":
                throw .badQuery("\(key) is not supported by this server", details: "supported: select, order, limit, offset, filters, or, and")
            default:
                guard !key.isEmpty, !key.contains("."), !key.contains("("), !key.contains(":") else {
                    throw .badQuery("failed to parse filter (\(key)=\(value))", details: "embedded resources, casts and JSON paths are not supported")
                }
                filters.append(.condition(try Self.parseCondition(column: key, value, quoted: false)))
            }
        }
    }

    /// `[not.]op.value` on `column`. In a logic tree (`quoted`) a value may be double-quoted.
    static func parseCondition(column: String, _ text: String, quoted: Bool) throws(RestQueryError) -> RestCondition {
        var rest = Substring(text)
        let negated = rest.hasPrefix("not.")
        if negated { rest = rest.dropFirst(4) }
        guard let dot = rest.firstIndex(of: ".") else {
            throw .badQuery("failed to parse filter (\(text))", details: "expected an operator and a value: op.value")
        }
        let name = String(rest[..<dot])
        let value = String(rest[rest.index(after: dot)...])
        guard let op = RestOperator(rawValue: name) else {
            if unsupportedOperators.contains(name) || name.hasPrefix("eq(") || name.hasPrefix("like(") {
                throw .badQuery(
                    "failed to parse filter (\(text))", details: "unsupported operator \"\(name)\"",
                    hint: "supported: eq, neq, gt, gte, lt, lte, like, ilike, in, is (each also as not.op)")
            }
            throw .badQuery("failed to parse filter (\(text))", details: "unknown operator \"\(name)\"")
        }
        switch op {
        case .in:
            guard value.hasPrefix("("), value.hasSuffix(")"), value.count >= 2 else {
                throw .badQuery("failed to parse filter (\(text))", details: "in. takes a list: in.(a,b,\"c,d\")")
            }
            return RestCondition(column, op, try splitList(String(value.dropFirst().dropLast()), context: text), negated: negated)
        case .is:
            return RestCondition(column, op, [value.lowercased()], negated: negated)
        default:
            return RestCondition(column, op, [quoted ? try unquote(value, context: text) : value], negated: negated)
        }
    }

    /// `a,"b,c",d` → `["a", "b,c", "d"]`; empty → `[]`. Quotes group; `\` escapes inside them.
    static func splitList(_ text: String, context: String) throws(RestQueryError) -> [String] {
        guard !text.isEmpty else { return [] }
        var items: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        var wasQuoted = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes {
                if character == "\\" { escaped = true } else if character == "\"" { inQuotes = false } else { current.append(character) }
            } else if character == "\"" {
                guard current.isEmpty, !wasQuoted else {
                    throw .badQuery("failed to parse list (\(context))", details: "a quote inside an unquoted value")
                }
                inQuotes = true
                wasQuoted = true
            } else if character == "," {
                items.append(current)
                current = ""
                wasQuoted = false
            } else {
                guard !wasQuoted else { throw .badQuery("failed to parse list (\(context))", details: "text after a closing quote") }
                current.append(character)
            }
        }
        guard !inQuotes, !escaped else { throw .badQuery("failed to parse list (\(context))", details: "an unclosed quote") }
        items.append(current)
        return items
    }

    /// A logic-tree value: `"a,b"` → `a,b` (with `\"` and `\\`); an unquoted one as it is.
    static func unquote(_ value: String, context: String) throws(RestQueryError) -> String {
        guard value.hasPrefix("\"") else { return value }
        let items = try splitList(value, context: context)
        guard items.count == 1 else { throw .badQuery("failed to parse filter (\(context))", details: "text after a quoted value") }
        return items[0]
    }

    static func parseOrder(_ value: String) throws(RestQueryError) -> [RestOrder] {
        try value.split(separator: ",", omittingEmptySubsequences: false).map { item throws(RestQueryError) in
            let pieces = item.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard let column = pieces.first, !column.isEmpty, pieces.count <= 3 else { throw .badQuery("failed to parse order (\(value))") }
            var order = RestOrder(column)
            var sawDirection = false
            for (index, modifier) in pieces.dropFirst().enumerated() {
                switch modifier {
                case "asc" where index == 0, "desc" where index == 0:
                    order.descending = modifier == "desc"
                    sawDirection = true
                case "nullsfirst" where order.nulls == nil && (index == 0 || sawDirection):
                    order.nulls = .first
                case "nullslast" where order.nulls == nil && (index == 0 || sawDirection):
                    order.nulls = .last
                default:
                    throw .badQuery("failed to parse order (\(value))", details: "expected column[.asc|.desc][.nullsfirst|.nullslast]")
                }
            }
            return order
        }
    }

    static func parseSelect(_ value: String) throws(RestQueryError) -> [String]? {
        let items = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if items.isEmpty || items == ["*"] { return nil }
        for item in items where item.contains("(") || item.contains(":") || item.contains("->") || item == "*" {
            throw .badQuery("failed to parse select parameter (\(value))", details: "only plain column names or * are supported")
        }
        return items
    }

    /// Percent-decodes one key or value. Bytes that are not UTF-8 (or a stray `%`) are a 400:
    /// matching on the undecoded text instead would silently answer "no rows".
    static func decode(_ text: Substring) throws(RestQueryError) -> String {
        guard let decoded = String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
            throw .badQuery("failed to parse the query string", details: "invalid percent-encoding or UTF-8 in \"\(text.prefix(64))\"")
        }
        return decoded
    }

    /// The query for `table`: columns, operators and values checked against its schema (42703,
    /// 22P02, …), `Range` intersected with `limit`/`offset`, and the row cap applied: without a
    /// limit, or with a larger one, at most ``RestQuery/maximumRows`` rows come back and
    /// `Content-Range` says which.
    package func restQuery(for table: RestTableSchema, range: ItemRange?, count: Bool) throws(RestQueryError) -> RestQuery {
        for column in select ?? [] { _ = try table.column(column) }
        var start = offset
        var end = limit.map { offset + $0 - 1 }
        if let range {
            start = max(start, range.first)
            if let last = range.last { end = min(end ?? last, last) }
        }
        let wanted = end.map { max(0, $0 - start + 1) } ?? RestQuery.maximumRows
        let query = RestQuery(filters: filters, order: order, limit: min(wanted, RestQuery.maximumRows), offset: start, count: count)
        try table.validate(query)
        return query
    }

    /// `rows` with the columns `select` names only (every column without one).
    package func project(_ rows: [[String: JSONValue]]) -> [[String: JSONValue]] {
        guard let select else { return rows }
        return rows.map { row in row.filter { select.contains($0.key) } }
    }
}

/// A `Range: 0-24` request header (with `Range-Unit: items`): rows `first` to `last` inclusive,
/// `last` open when absent. An unparsable header is ignored, as PostgREST ignores it.
package struct ItemRange: Sendable, Equatable {
    package var first: Int
    package var last: Int?

    package init?(header: String?) {
        guard var text = header?.trimmingCharacters(in: .whitespaces) else { return nil }
        if text.hasPrefix("items=") { text.removeFirst(6) }
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int(parts[0]), first >= 0 else { return nil }
        if parts[1].isEmpty {
            self.first = first
            self.last = nil
        } else {
            guard let last = Int(parts[1]), last >= 0 else { return nil }
            self.first = first
            self.last = last
        }
    }

    package init(first: Int, last: Int?) {
        self.first = first
        self.last = last
    }
}

/// The nested lists of `or=(…)`: `(item,item,…)` where an item is `col.[not.]op.value` or a
/// group `[not.]and(…)` / `[not.]or(…)`.
struct LogicTreeParser {
    let text: [Character]
    var index = 0

    init(_ text: String) { self.text = Array(text) }

    var atEnd: Bool { index == text.count }

    mutating func list(depth: Int) throws(RestQueryError) -> [RestFilter] {
        guard depth <= RestQuery.maximumDepth else { throw .badQuery("logic tree nested deeper than \(RestQuery.maximumDepth) levels") }
        guard index < text.count, text[index] == "(" else { throw error("expected (") }
        index += 1
        var members: [RestFilter] = []
        while true {
            members.append(try item(depth: depth))
            guard index < text.count else { throw error("expected , or )") }
            let separator = text[index]
            index += 1
            if separator == ")" { return members }
            guard separator == "," else { throw error("expected , or )") }
        }
    }

    mutating func item(depth: Int) throws(RestQueryError) -> RestFilter {
        let rest = String(text[index...])
        for (prefix, junction, negated) in [
            ("not.and(", RestGroup.Junction.and, true), ("not.or(", .or, true), ("and(", .and, false), ("or(", .or, false),
        ]
        where rest.hasPrefix(prefix) {
            index += prefix.count - 1  // at the group's "("
            return .group(RestGroup(junction, negated: negated, try list(depth: depth + 1)))
        }
        // One condition: up to the next , or ) outside quotes and parentheses.
        let start = index
        var nesting = 0
        var inQuotes = false
        var escaped = false
        while index < text.count {
            let character = text[index]
            if escaped {
                escaped = false
            } else if inQuotes {
                if character == "\\" { escaped = true } else if character == "\"" { inQuotes = false }
            } else if character == "\"" {
                inQuotes = true
            } else if character == "(" {
                nesting += 1
            } else if character == ")" {
                if nesting == 0 { break }
                nesting -= 1
            } else if character == "," && nesting == 0 {
                break
            }
            index += 1
        }
        let condition = String(text[start..<index])
        guard let dot = condition.firstIndex(of: "."), dot != condition.startIndex else {
            throw error("expected column.operator.value, got \"\(condition)\"")
        }
        let column = String(condition[..<dot])
        guard !column.contains("("), !column.contains(":") else { throw error("expected column.operator.value, got \"\(condition)\"") }
        return .condition(try PostgRESTQuery.parseCondition(column: column, String(condition[condition.index(after: dot)...]), quoted: true))
    }

    func error(_ details: String) -> RestQueryError {
        .badQuery("failed to parse logic tree (\(String(text)))", details: details)
    }
}

extension RestQueryError {
    /// PGRST100: the query string could not be parsed or uses what is not supported.
    package static func badQuery(_ message: String, details: String? = nil, hint: String? = nil) -> RestQueryError {
        RestQueryError(code: "PGRST100", message: message, details: details, hint: hint)
    }
}
