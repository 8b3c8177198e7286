import Foundation
import HTTPTypes
import Hummingbird

/// Adds `Strict-Transport-Security` (`GATEWAY_HSTS`) to every answer, errors included, of a request
/// that reached the gateway over HTTPS: the gateway itself speaks plain HTTP behind a TLS proxy
/// (an Ingress, Caddy), so it believes `X-Forwarded-Proto: https` from a trusted proxy
/// (`GATEWAY_TRUSTED_PROXIES`) only. Browsers ignore the header over plain HTTP anyway; a client
/// cannot make the gateway send it by claiming HTTPS itself.
///
/// It runs outside ``RequestTracingMiddleware``, which has turned any error into a response by then.
package struct StrictTransportSecurityMiddleware: RouterMiddleware {
    package typealias Context = GatewayContext
    /// The header's value, e.g. `max-age=31536000; includeSubDomains`.
    let value: String
    let trustedProxies: TrustedProxies

    static let forwardedProtoHeader = HTTPField.Name("X-Forwarded-Proto")!

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if Self.arrivedOverHTTPS(
            forwardedProto: request.headers[Self.forwardedProtoHeader], peer: context.peerAddress, trustedProxies: trustedProxies)
        {
            response.headers[.strictTransportSecurity] = value
        }
        return response
    }

    /// Whether a trusted proxy says the client's connection was HTTPS (the first proxy's word:
    /// the leftmost value of a comma-separated list).
    static func arrivedOverHTTPS(forwardedProto: String?, peer: String?, trustedProxies: TrustedProxies) -> Bool {
        guard let peer, let address = IPAddressBytes(peer), trustedProxies.isTrusted(address), let forwardedProto else { return false }
        return forwardedProto.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() == "https"
    }
}
