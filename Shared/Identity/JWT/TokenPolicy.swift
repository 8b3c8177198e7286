import Foundation
import JWTKit

/// The JSON coders every token here is written and read with, given to jwt-kit as its serializer
/// and parser: keys sorted and times as whole seconds (the bytes our tokens have always had), and
/// times read as integer or fractional seconds (RFC 7519's NumericDate).
enum TokenCoding {
    static let serializer = DefaultJWTSerializer(jsonEncoder: encoder)
    static let parser = DefaultJWTParser(jsonDecoder: decoder)

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .integerSecondsSince1970
        return encoder
    }

    /// The parser's decoder, for claims read without jwt-kit (``SessionTokenVerifier``).
    static let claimsDecoder = decoder

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }

    /// `date` cut to the whole second below, as a NumericDate on the wire holds it.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}

/// The time checks every verifier makes, with one leeway for clock skew. jwt-kit's own checks
/// (`verifyNotExpired`) take no leeway and read the clock themselves, so the payload types here
/// leave `verify(using:)` empty and their verifiers call this with the caller's `now`.
enum TimeWindow {
    /// Throws ``IdentityError/expired`` or ``IdentityError/notYetValid``.
    static func check(expiresAt: Date, issuedAt: Date?, notBefore: Date?, now: Date, leeway: TimeInterval) throws {
        guard now < expiresAt.addingTimeInterval(leeway) else { throw IdentityError.expired }
        if let issuedAt, issuedAt > now.addingTimeInterval(leeway) { throw IdentityError.notYetValid }
        if let notBefore, notBefore > now.addingTimeInterval(leeway) { throw IdentityError.notYetValid }
    }
}

/// Equality whose time does not depend on where the inputs first differ.
func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
    return difference == 0
}
