import Foundation
import GatewayService
import HTTPTypes
import Hummingbird

/// What a `Prefer` header asks (RFC 7240, PostgREST's preferences): `count=exact` (also
/// `planned`/`estimated`, answered exactly), `return=representation|minimal|headers-only`,
/// `resolution=ignore-duplicates|merge-duplicates`. Preferences this server does not know are
/// ignored, as PostgREST ignores them by default.
struct PostgRESTPreferences: Sendable, Equatable {
    enum Return: Sendable { case minimal, representation, headersOnly }
    enum Resolution: Sendable { case ignoreDuplicates, mergeDuplicates }

    var count = false
    var returns = Return.minimal
    var resolution: Resolution?

    static let header = HTTPField.Name("Prefer")!

    init(_ headers: HTTPFields) {
        for value in headers[values: Self.header] {
            for item in value.split(separator: ",") {
                switch item.trimmingCharacters(in: .whitespaces).lowercased() {
                case "count=exact", "count=planned", "count=estimated": count = true
                case "return=representation": returns = .representation
                case "return=minimal": returns = .minimal
                case "return=headers-only": returns = .headersOnly
                case "resolution=ignore-duplicates": resolution = .ignoreDuplicates
                case "resolution=merge-duplicates": resolution = .mergeDuplicates
                default: break
                }
            }
        }
    }
}
