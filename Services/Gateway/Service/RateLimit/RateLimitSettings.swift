import ServiceKit

/// The rate limits' configuration (`GATEWAY_RATE_LIMIT_*`), each rule in
/// ``RateLimitRule/format`` (`10/60s,burst=5`), `off` (or `0`) for none.
///
/// Defaults are sized for a real mobile app, where many people share one address behind a carrier
/// NAT or a school's network, and a person signs in or accepts a handful of times a day: per
/// address they stop scripted guessing and floods without touching a crowded network; per
/// person they stop one account from hammering the audit trail.
public struct RateLimitSettings: Sendable, Equatable {
    /// Sign-in (Apple sign-in, refresh, seed 004's `POST /api/users`) per client address.
    public var signInPerIP: RateLimitRule?
    /// Sign-in per Apple id, where a verified credential names one (`POST /api/users`, and
    /// `POST /api/auth/apple` when the gateway verifies Apple tokens itself).
    public var signInPerUser: RateLimitRule?
    /// Acceptance writes (accept-tos, native accept/acknowledge/decline, `legal_acceptances`) per address.
    public var acceptPerIP: RateLimitRule?
    /// Acceptance writes per signed-in person.
    public var acceptPerUser: RateLimitRule?
    /// Data exports per signed-in user (each reads every byte the user stored).
    public var exportPerUser: RateLimitRule?
    /// Keys each rule tracks at most (memory bound against address rotation).
    public var maxKeys: Int

    /// All rules off: for benchmarks and tests that drive one address hard.
    public static let off = RateLimitSettings(
        signInPerIP: nil, signInPerUser: nil, acceptPerIP: nil, acceptPerUser: nil, exportPerUser: nil, maxKeys: 100_000)

    public init(
        signInPerIP: RateLimitRule?, signInPerUser: RateLimitRule?, acceptPerIP: RateLimitRule?, acceptPerUser: RateLimitRule?,
        exportPerUser: RateLimitRule? = nil, maxKeys: Int
    ) {
        self.signInPerIP = signInPerIP
        self.signInPerUser = signInPerUser
        self.acceptPerIP = acceptPerIP
        self.acceptPerUser = acceptPerUser
        self.exportPerUser = exportPerUser
        self.maxKeys = maxKeys
    }

    public init(environment env: EnvironmentReader) throws(ConfigurationError) {
        signInPerIP = try Self.rule(
            env, "GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP", default: "60/60s,burst=30",
            "Sign-in requests (POST /api/auth/apple, /api/auth/refresh, /api/users) per client address: COUNT/PERIOD[,burst=N] or off. 429 with Retry-After past it. Every rule counts per gateway instance."
        )
        signInPerUser = try Self.rule(
            env, "GATEWAY_RATE_LIMIT_SIGN_IN_PER_USER", default: "10/60s,burst=10",
            "Sign-in requests per Apple id, where a token verified by the gateway names one (POST /api/users; POST /api/auth/apple with GATEWAY_APPLE_BUNDLE_ID set): COUNT/PERIOD[,burst=N] or off."
        )
        acceptPerIP = try Self.rule(
            env, "GATEWAY_RATE_LIMIT_ACCEPT_PER_IP", default: "120/60s,burst=60",
            "Acceptance writes (accept-tos, /api/me/consents/{type}/{action}, POST /rest/v1/legal_acceptances) per client address: COUNT/PERIOD[,burst=N] or off."
        )
        acceptPerUser = try Self.rule(
            env, "GATEWAY_RATE_LIMIT_ACCEPT_PER_USER", default: "20/60s,burst=10",
            "Acceptance writes per signed-in user (from the verified session, never from the path or body): COUNT/PERIOD[,burst=N] or off.")
        exportPerUser = try Self.rule(
            env, "GATEWAY_RATE_LIMIT_EXPORT_PER_USER", default: "6/1h,burst=2",
            "Data exports (GET /api/me/export) per signed-in user: COUNT/PERIOD[,burst=N] or off. Each export reads every document the user stored.")
        maxKeys = try env.int(
            "GATEWAY_RATE_LIMIT_MAX_KEYS", default: 100_000, in: 100...10_000_000,
            "Keys (addresses, users) each rate-limit rule tracks at most; past it the nearest-to-idle are forgotten. Bounds memory (~100 bytes a key)."
        )
    }

    static func rule(_ env: EnvironmentReader, _ name: String, default defaultText: String, _ summary: String) throws(ConfigurationError)
        -> RateLimitRule?
    {
        let text = env.string(name, default: defaultText, summary)
        do { return try RateLimitRule.parse(text) } catch {
            throw ConfigurationError(variable: name, value: text, expected: "\(RateLimitRule.format): \(error.reason)")
        }
    }
}
