import Foundation

/// `aud` as JWT allows it: one string or an array of strings (RFC 7519 §4.1.3).
public struct Audience: Sendable, Equatable, Codable {
    public let values: [String]

    public init(_ values: [String]) { self.values = values }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            values = [one]
        } else {
            values = try container.decode([String].self)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if values.count == 1 { try container.encode(values[0]) } else { try container.encode(values) }
    }

    /// Whether any of the token's audiences is one of `accepted`.
    public func contains(anyOf accepted: Set<String>) -> Bool { values.contains(where: accepted.contains) }
}

/// A JWT NumericDate: seconds since the epoch, integer or fractional in JSON.
public struct NumericDate: Sendable, Equatable, Comparable, Codable {
    public let secondsSince1970: Double

    public init(_ date: Date) { secondsSince1970 = date.timeIntervalSince1970.rounded(.down) }

    public init(from decoder: any Decoder) throws {
        secondsSince1970 = try decoder.singleValueContainer().decode(Double.self)
        guard secondsSince1970.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not finite"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Int64(secondsSince1970))
    }

    public var date: Date { Date(timeIntervalSince1970: secondsSince1970) }

    public static func < (lhs: NumericDate, rhs: NumericDate) -> Bool { lhs.secondsSince1970 < rhs.secondsSince1970 }
}

/// A boolean Apple sends either as JSON `true`/`false` or as the strings `"true"`/`"false"`.
struct LenientBool: Sendable, Decodable {
    let value: Bool

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let bool = try? container.decode(Bool.self) {
            value = bool
            return
        }
        switch try container.decode(String.self) {
        case "true": value = true
        case "false": value = false
        default:
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a boolean"))
        }
    }
}

/// The time checks every verifier makes, with one leeway for clock skew.
enum TimeWindow {
    /// Throws ``IdentityError/expired`` or ``IdentityError/notYetValid``.
    static func check(
        expiresAt: NumericDate, issuedAt: NumericDate?, notBefore: NumericDate?, now: Date, leeway: TimeInterval
    ) throws {
        let now = now.timeIntervalSince1970
        guard now < expiresAt.secondsSince1970 + leeway else { throw IdentityError.expired }
        if let issuedAt, issuedAt.secondsSince1970 > now + leeway { throw IdentityError.notYetValid }
        if let notBefore, notBefore.secondsSince1970 > now + leeway { throw IdentityError.notYetValid }
    }
}

/// Equality whose time does not depend on where the inputs first differ.
func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
    return difference == 0
}
