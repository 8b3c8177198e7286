import Foundation

/// The part of PostgREST's query language the seeds' Supabase calls use: `select` (a column list
/// or `*`), `col=eq.value` filters, `order=col.asc|desc`, `limit`, `offset`. Anything else
/// (other operators, `or`/`and`, embedding, casts) is refused with PostgREST's own parse error
/// (PGRST100, 400), never guessed at.
struct PostgRESTQuery: Sendable, Equatable {
    var select: [String]?
    var filters: [(column: String, value: String)] = []
    var order: [(column: String, ascending: Bool)] = []
    var limit: Int?
    var offset = 0

    static func == (lhs: PostgRESTQuery, rhs: PostgRESTQuery) -> Bool {
        lhs.select == rhs.select && lhs.filters.elementsEqual(rhs.filters, by: { $0 == $1 })
            && lhs.order.elementsEqual(rhs.order, by: { $0 == $1 }) && lhs.limit == rhs.limit && lhs.offset == rhs.offset
    }

    /// Parses a raw query string (`select=content,version&type=eq.terms_of_service`).
    init(rawQuery: String?) throws(PostgRESTError) {
        for pair in (rawQuery ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = try Self.decode(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1]) : ""
            switch key {
            case "select":
                select = try Self.parseSelect(value)
            case "order":
                order = try value.split(separator: ",").map { item throws(PostgRESTError) in
                    let pieces = item.split(separator: ".").map(String.init)
                    guard let column = pieces.first, pieces.count <= 3 else { throw .badQuery("failed to parse order (\(value))") }
                    var ascending = true
                    for modifier in pieces.dropFirst() {
                        switch modifier {
                        case "asc": ascending = true
                        case "desc": ascending = false
                        case "nullsfirst", "nullslast": break
                        default: throw .badQuery("failed to parse order (\(value))")
                        }
                    }
                    return (column, ascending)
                }
            case "limit":
                guard let number = Int(value), number >= 0 else { throw .badQuery("failed to parse limit (\(value))") }
                limit = number
            case "offset":
                guard let number = Int(value), number >= 0 else { throw .badQuery("failed to parse offset (\(value))") }
                offset = number
            case "or", "and", "not.or", "not.and", "on_conflict", "columns":
                throw .badQuery("\(key) is not supported by this server", details: "supported: select, order, limit, offset and column=eq.value filters")
            default:
                guard value.hasPrefix("eq.") else {
                    let op = value.split(separator: ".", maxSplits: 1).first.map(String.init) ?? value
                    throw .badQuery("failed to parse filter (\(value))", details: "unsupported operator \"\(op)\"; only eq. is supported")
                }
                filters.append((key, String(value.dropFirst(3))))
            }
        }
    }

    static func parseSelect(_ value: String) throws(PostgRESTError) -> [String]? {
        let items = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if items.isEmpty || items == ["*"] { return nil }
        for item in items where item.contains("(") || item.contains(":") || item.contains("->") || item == "*" {
            throw .badQuery("failed to parse select parameter (\(value))", details: "only plain column names or * are supported")
        }
        return items
    }

    /// Percent-decodes one key or value. Bytes that are not UTF-8 (or a stray `%`) are a 400:
    /// matching on the undecoded text instead would silently answer "no rows".
    static func decode(_ text: Substring) throws(PostgRESTError) -> String {
        guard let decoded = String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
            throw .badQuery("failed to parse the query string", details: "invalid percent-encoding or UTF-8 in \"\(text.prefix(64))\"")
        }
        return decoded
    }
}
