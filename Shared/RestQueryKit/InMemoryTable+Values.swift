import BusCore
import Foundation

extension InMemoryTable {
    /// A row's value or a filter's value as the column's type compares it: text by code point
    /// (PostgreSQL's `C` collation), uuids as lowercase text, numbers as numbers, timestamps as
    /// instants, `false` before `true`.
    enum SQLValue: Equatable {
        case null
        case text(String)
        case number(Double)
        /// Microseconds since 1970 (PostgreSQL's `timestamptz` resolution).
        case instant(Int64)
        case bool(Bool)

        init(_ value: JSONValue?, _ type: RestColumnType) {
            switch value {
            case .string(let text)?: self.init(text, type)
            case .int(let number)?: self = .number(Double(number))
            case .number(let number)?: self = .number(number)
            case .bool(let flag)?: self = .bool(flag)
            default: self = .null
            }
        }

        /// A filter's value, already checked against the column's type (22P02 otherwise).
        init(_ text: String, _ type: RestColumnType) {
            switch type {
            case .text: self = .text(text)
            case .uuid: self = .text(text.lowercased())
            case .integer: self = Int64(text).map { .number(Double($0)) } ?? .text(text)
            case .boolean: self = .bool(text.lowercased() == "true")
            case .timestamp: self = RestInstant.microseconds(text).map(SQLValue.instant) ?? .text(text)
            }
        }

        /// Nil when either is null (SQL's unknown).
        static func compare(_ a: SQLValue, _ b: SQLValue) -> ComparisonResult? {
            func order<T: Comparable>(_ x: T, _ y: T) -> ComparisonResult {
                x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
            }
            switch (a, b) {
            case (.text(let x), .text(let y)):
                if x.unicodeScalars.elementsEqual(y.unicodeScalars) { return .orderedSame }
                return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) ? .orderedAscending : .orderedDescending
            case (.number(let x), .number(let y)): return order(x, y)
            case (.instant(let x), .instant(let y)): return order(x, y)
            case (.bool(let x), .bool(let y)): return order(x ? 1 : 0, y ? 1 : 0)
            default: return nil
            }
        }
    }
}
