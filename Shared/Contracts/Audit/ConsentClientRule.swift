import BusCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the gateway forwards about the client for a consent record (its address and user agent),
/// and the one rule both its readers hold it to: Accounts checks it before it stores an act, so
/// that nothing it stores is refused later by Audit, which checks it again before it chains the
/// record.
public enum ConsentClientRule {
    /// Longer than any textual IPv6 address, scope included.
    public static let maximumAddressBytes = 64
    public static let maximumUserAgentBytes = 1024

    /// A textual IPv4 or IPv6 address, as `inet_pton` reads them.
    public static func isAddress(_ text: String) -> Bool {
        guard text.utf8.count <= maximumAddressBytes else { return false }
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// `invalid_argument` naming the field when either value breaks the rule.
    public static func check(clientIP: String?, userAgent: String?) throws(BusError) {
        if let clientIP, !isAddress(clientIP) { throw BusError(.invalidArgument, "clientIP is not an IPv4 or IPv6 address") }
        if let userAgent, userAgent.utf8.count > maximumUserAgentBytes {
            throw BusError(.invalidArgument, "userAgent is longer than \(maximumUserAgentBytes) bytes")
        }
    }
}
