import BusCore

/// The most rows one page of a paged method returns, and the one check (and wording) of a
/// requested `limit`: services check their requests with it, and the gateway checks query
/// parameters and states its OpenAPI maximums with the same constants.
public struct PageLimit: Sendable, Hashable {
    public let maximum: Int

    public init(maximum: Int) {
        precondition(maximum >= 1, "a page holds at least one row")
        self.maximum = maximum
    }

    /// `documents.list` and `documents.export`.
    public static let documents = PageLimit(maximum: 200)
    /// `audit.history`.
    public static let auditHistory = PageLimit(maximum: 1000)
    /// `accounts.find_users`.
    public static let findUsers = PageLimit(maximum: 500)
    /// `accounts.restricted_users`.
    public static let restrictedUsers = PageLimit(maximum: 1000)

    /// `limit` itself when it is 1 to ``maximum``; otherwise `invalid_argument`.
    @discardableResult
    public func validate(_ limit: Int) throws -> Int {
        guard (1...maximum).contains(limit) else { throw refusal }
        return limit
    }

    /// A limit given as text (a query parameter), refused with the same wording when it is not a
    /// whole number.
    public func validate(text: some StringProtocol) throws -> Int {
        guard let limit = Int(text) else { throw refusal }
        return try validate(limit)
    }

    private var refusal: BusError { BusError(.invalidArgument, "limit must be between 1 and \(maximum)") }
}
