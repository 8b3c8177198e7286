import Foundation
import HTTPTypes
import Hummingbird

/// The scheme and authority every URL the API returns starts with (`file_url`, share links' `url`,
/// upload `Location`s), so clients can open them as they are.
///
/// `GATEWAY_PUBLIC_URL` when set (what a deployment behind a load balancer or a CDN should do).
/// Otherwise the request's own: its `Host` over `http`; when the connection comes from a trusted
/// proxy (`GATEWAY_TRUSTED_PROXIES`), that proxy's `X-Forwarded-Proto` and `X-Forwarded-Host`
/// win. A host that is not a plain host name or address (with an optional port) is not used:
/// the next one is (the forwarded host, then `Host`, then the gateway's own bind address).
package struct PublicBaseURL: Sendable {
    /// The configured base, without a trailing `/`; nil to derive it per request.
    let configured: String?
    let trustedProxies: TrustedProxies
    /// `http://<bind host>:<port>`, for a request without a usable host.
    let fallback: String

    static let forwardedHost = HTTPField.Name("X-Forwarded-Host")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    init(configured: URL?, trustedProxies: TrustedProxies, httpHost: String, httpPort: Int) {
        self.configured = configured.map { url in
            var text = url.absoluteString
            while text.hasSuffix("/") { text.removeLast() }
            return text
        }
        self.trustedProxies = trustedProxies
        let host = httpHost.contains(":") ? "[\(httpHost)]" : httpHost
        fallback = "http://\(host == "0.0.0.0" || host == "[::]" ? "localhost" : host):\(httpPort)"
    }

    /// The base for URLs answered to `request`.
    package func base(for request: Request, context: GatewayContext) -> String {
        if let configured { return configured }
        var scheme = "http"
        var hosts = [request.head.authority]
        if trustedProxies.trusts(peer: context.peerAddress) {
            if let proto = Self.first(request.headers[Self.forwardedProto])?.lowercased(), proto == "https" || proto == "http" { scheme = proto }
            hosts.insert(Self.first(request.headers[Self.forwardedHost]), at: 0)
        }
        guard let host = hosts.compactMap({ $0 }).first(where: Self.isPlainAuthority) else { return fallback }
        return "\(scheme)://\(host)"
    }

    /// The first entry of a comma-separated header (each proxy may append its own).
    static func first(_ value: String?) -> String? {
        value?.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Letters, digits, `.-` (a host name or IPv4 address), or a bracketed IPv6 address, and an
    /// optional `:port`: nothing that could end the authority or start a path, query or userinfo.
    static func isPlainAuthority(_ text: String) -> Bool {
        guard (1...260).contains(text.utf8.count) else { return false }
        return text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":")
                || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
        } && !text.hasPrefix(".") && !text.hasPrefix("-") && !text.hasPrefix(":")
    }
}
