import Foundation

/// The gateway's rate limits, checked in the route handlers before the bus calls they guard.
///
/// Order matters for who pays: the per-address rule is taken first, before the credential is even
/// looked at, so a request with a bad or stolen-looking token spends its sender's address budget;
/// the per-user rule is taken only once the credential is verified, keyed by the identity it
/// proved, so nobody can spend another person's budget by naming them in a path or a body.
///
/// Limits are per gateway instance: with N replicas behind a balancer, a client spread over
/// them gets up to N times the rate. (They are a brake on abuse, not a quota.)
public struct RateLimits: Sendable {
    let signInPerIP: RateLimiter?
    let signInPerUser: RateLimiter?
    let acceptPerIP: RateLimiter?
    let acceptPerUser: RateLimiter?
    let exportPerUser: RateLimiter?

    public init(_ settings: RateLimitSettings, clock: (@Sendable () -> Duration)? = nil) {
        func limiter(_ name: String, _ rule: RateLimitRule?) -> RateLimiter? {
            rule.map { RateLimiter(name: name, rule: $0, maxKeys: settings.maxKeys, clock: clock) }
        }
        signInPerIP = limiter("sign_in_per_ip", settings.signInPerIP)
        signInPerUser = limiter("sign_in_per_user", settings.signInPerUser)
        acceptPerIP = limiter("accept_per_ip", settings.acceptPerIP)
        acceptPerUser = limiter("accept_per_user", settings.acceptPerUser)
        exportPerUser = limiter("export_per_user", settings.exportPerUser)
    }

    /// A sign-in attempt from the request's client address.
    func signIn(from context: GatewayContext) throws(RateLimited) {
        try signInPerIP?.take(Self.addressKey(context.clientIP))
    }

    /// Whether sign-ins are limited per person (else there is no need to find out who signs in).
    var limitsSignInPerPerson: Bool { signInPerUser != nil }

    /// A sign-in by a verified Apple id.
    func signIn(appleId: String) throws(RateLimited) {
        try signInPerUser?.take(appleId)
    }

    /// An acceptance write from the request's client address.
    func accept(from context: GatewayContext) throws(RateLimited) {
        try acceptPerIP?.take(Self.addressKey(context.clientIP))
    }

    /// `writes` acceptance writes by the verified user of Apple id `appleId`. A request of more
    /// writes than the burst is charged the burst (it then waits a full refill).
    package func accept(appleId: String, writes: Int = 1) throws(RateLimited) {
        guard let acceptPerUser else { return }
        try acceptPerUser.take(appleId, cost: max(1, min(writes, acceptPerUser.rule.burst)))
    }

    /// A data export by the signed-in user `userId` (each reads every document's bytes).
    func export(userId: UUID) throws(RateLimited) {
        try exportPerUser?.take(userId.uuidString.lowercased())
    }

    /// The key of a client address: the address itself for IPv4, its /64 network for IPv6 (one
    /// subscriber usually holds a whole /64, so counting single addresses would let one client
    /// rotate through 2^64 of them). An unknown address (no TCP peer) shares one key.
    static func addressKey(_ address: String?) -> String {
        guard let address, let bytes = IPAddressBytes(address) else { return "unknown" }
        guard bytes.bytes.count == 16 else { return bytes.text }
        return IPAddressBytes(bytes: Array(bytes.bytes.prefix(8)) + Array(repeating: 0, count: 8)).text + "/64"
    }
}
