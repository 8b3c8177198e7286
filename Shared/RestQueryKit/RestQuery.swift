import Foundation

/// A read of one table in PostgREST's terms, as the gateway parsed it from `/rest/v1/<table>?…`
/// and checked it against the table's ``RestTableSchema``, carried over the bus to the service
/// that owns the table, which turns it into parameterised SQL (``RestSQL``). Column
/// names here are names of the table's schema, never SQL; values are text the SQL binds as
/// parameters.
public struct RestQuery: Codable, Sendable, Equatable {
    /// Conditions that must all hold (each query-string filter, `or=(…)` and `and=(…)` is one).
    public var filters: [RestFilter]
    /// `order=`: the sort keys, first one first. The service adds its own tiebreak after them.
    public var order: [RestOrder]
    /// How many rows at most (after ``offset``); the gateway always sets it (the row cap).
    public var limit: Int
    public var offset: Int
    /// `Prefer: count=exact`: also count every row the filters match.
    public var count: Bool

    public init(filters: [RestFilter] = [], order: [RestOrder] = [], limit: Int = RestQuery.maximumRows, offset: Int = 0, count: Bool = false) {
        self.filters = filters
        self.order = order
        self.limit = limit
        self.offset = offset
        self.count = count
    }

    /// The most rows one answer carries (Supabase's default `max_rows`): a larger or absent
    /// `limit` is answered with this many and a `Content-Range` that says so.
    public static let maximumRows = 1000
    /// The most values one `in.(…)` list may hold, and the most conditions in one query.
    public static let maximumValues = 100
    /// How deep `or=(…and(…or(…)))` may nest.
    public static let maximumDepth = 8
}

/// One condition, or a group of them joined by `and` / `or`, possibly negated (`not.or=(…)`).
public indirect enum RestFilter: Codable, Sendable, Equatable {
    case condition(RestCondition)
    case group(RestGroup)
}

/// `and(…)` / `or(…)`, possibly `not.`.
public struct RestGroup: Codable, Sendable, Equatable {
    public enum Junction: String, Codable, Sendable { case and, or }
    public var junction: Junction
    public var negated: Bool
    public var members: [RestFilter]

    public init(_ junction: Junction, negated: Bool = false, _ members: [RestFilter]) {
        self.junction = junction
        self.negated = negated
        self.members = members
    }
}

/// `column=[not.]operator.value`.
public struct RestCondition: Codable, Sendable, Equatable {
    public var column: String
    public var op: RestOperator
    public var negated: Bool
    /// One value; the list for `in`; for `is` one of `null`, `not_null`, `true`, `false`, `unknown`.
    /// For `like`/`ilike` PostgREST's pattern (`*` stands for `%`).
    public var values: [String]

    public init(_ column: String, _ op: RestOperator, _ values: [String], negated: Bool = false) {
        self.column = column
        self.op = op
        self.values = values
        self.negated = negated
    }
}

/// The operators this subset supports (PostgREST's abbreviations).
public enum RestOperator: String, Codable, Sendable, CaseIterable {
    case eq, neq, gt, gte, lt, lte, like, ilike, `in`, `is`
}

/// One `order=` key: `column.asc|desc.nullsfirst|nullslast`. Without a nulls modifier
/// PostgreSQL's default applies (nulls last ascending, first descending), as in PostgREST.
public struct RestOrder: Codable, Sendable, Equatable {
    public enum Nulls: String, Codable, Sendable { case first, last }
    public var column: String
    public var descending: Bool
    public var nulls: Nulls?

    public init(_ column: String, descending: Bool = false, nulls: Nulls? = nil) {
        self.column = column
        self.descending = descending
        self.nulls = nulls
    }
}

extension RestFilter {
    /// Every condition in the tree, and the tree's depth.
    public var conditions: [RestCondition] {
        switch self {
        case .condition(let condition): [condition]
        case .group(let group): group.members.flatMap(\.conditions)
        }
    }

    public var depth: Int {
        switch self {
        case .condition: 0
        case .group(let group): 1 + (group.members.map(\.depth).max() ?? 0)
        }
    }
}
