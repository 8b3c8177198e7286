import Bus
import Foundation
import Identity
import ServiceKit

/// The gateway core's settings (besides ServiceKit's common ones), read from the environment; a
/// route module reads its own (the Supabase module's `GATEWAY_JWT_SECRET`).
///
/// | Variable | Default | Description |
/// | --- | --- | --- |
/// | `GATEWAY_HTTP_HOST` | `127.0.0.1` | Address the HTTP server binds (0.0.0.0 in containers). |
/// | `GATEWAY_HTTP_PORT` | `8080` | Port of the HTTP server; 0 picks a free one. |
/// | `GATEWAY_TRUSTED_PROXIES` | (empty) | Proxies whose `X-Forwarded-For` is believed (addresses or CIDR blocks). |
/// | `GATEWAY_HSTS` | `max-age=31536000; includeSubDomains` | `Strict-Transport-Security` for requests a trusted proxy forwarded as HTTPS; `off`: never. |
/// | `GATEWAY_MAX_BODY_BYTES` | `65536` | Largest JSON request body. |
/// | `GATEWAY_BUS_TIMEOUT` | `5s` | Deadline of one bus call made for a request. |
/// | `GATEWAY_SESSION_CACHE_ENTRIES` | `250000` | Verified session tokens remembered (``VerifiedTokenCache``). |
/// | `GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS` | `false` | Lets seed 004's client call its routes without credentials. |
/// | `GATEWAY_APPLE_BUNDLE_ID` | (empty) | Audience of Apple identity tokens accepted as credentials. |
/// | `GATEWAY_APPLE_JWKS` | Apple's key set URL | Where Apple's keys come from (https URL or file path). |
/// | `GATEWAY_LEGAL_REFRESH` | `5s` | How often the copy of the legal texts is revalidated with Legal (bounds a lost event). |
/// | `GATEWAY_PUBLIC_URL` | (empty) | Start of every URL the API returns; empty: the request's host. |
/// | `GATEWAY_FILE_URL_KEYS` | (random) | HMAC keys of signed `file_url` links (first signs, all verify). |
/// | `GATEWAY_FILE_URL_LIFETIME` | `1h` | How long a `file_url` link works at least. |
/// | `GATEWAY_DOWNLOAD_MAX_AGE` | `1h` | `Cache-Control: max-age` of downloads. |
/// | `GATEWAY_RATE_LIMIT_*` | see ``RateLimitSettings`` | Sign-in and acceptance-write limits per address and per user. |
/// | `GATEWAY_CORS_ORIGINS` | (empty) | Browser origins allowed to call the API cross-origin (``CORSPolicy``). |
public struct GatewaySettings: EnvironmentSettings {
    public var httpHost: String
    public var httpPort: Int
    public var trustedProxies: TrustedProxies
    /// `Strict-Transport-Security` sent on answers to requests a trusted proxy forwarded as HTTPS
    /// (``StrictTransportSecurityMiddleware``); nil: never sent.
    public var strictTransportSecurity: String?
    public var maxBodyBytes: Int
    /// Deadlines and the connection cap that keep slow clients from holding the gateway.
    public var connectionLimits: SlowClientLimits
    /// How long a keep-alive connection may sit idle between requests.
    public var idleTimeout: Duration
    /// Bytes per `documents.read`/`documents.append` call (at most Documents' `DOCUMENTS_CHUNK_SIZE`).
    public var documentsChunkSize: Int
    /// Largest tus upload announced (`Tus-Max-Size`); Documents enforces its own maximum too.
    public var tusMaxSize: Int64
    public var busTimeout: Duration
    /// How many acceptance batches may be under way at once (the rest gather for the next).
    /// One by default (strict group commit): most of a batch's cost in Accounts, Audit and
    /// PostgreSQL is per batch, so more slots make smaller batches whose fixed costs outweigh the
    /// overlap on two cores (deploy/BENCHMARKS.md, designs tried and dropped).
    public var acceptBatchesInFlight: Int
    /// How often the gateway catches up on Accounts' session revocations.
    public var sessionRevocationPoll: Duration
    /// How long the gateway's view of revocations may go without word from Accounts before session
    /// tokens are checked by Accounts again.
    public var sessionViewMaxStaleness: Duration
    /// Verified session tokens the gateway holds, so a token seen again skips its Ed25519 check
    /// (``VerifiedTokenCache``): sized for the live sessions (each token lives 15 minutes).
    public var sessionCacheEntries: Int
    /// How often the gateway's copy of the legal texts is revalidated with Legal besides the
    /// `legal.published` events: the bound on how long a lost event can leave it behind.
    public var legalRefresh: Duration
    public var legacyUnauthenticatedClients: Bool
    /// Whether `/readyz` and `/metrics` are served on the API port too (they always are on
    /// `HEALTH_PORT`, which is not published).
    public var publicOperations: Bool
    public var appleBundleID: String?
    public var appleKeySet: AppleKeySource
    public var peers: GatewayPeers
    /// Sign-in and acceptance-write rate limits.
    public var rateLimits: RateLimitSettings
    /// Browser origins (`scheme://host[:port]`) allowed to call the API cross-origin; empty: none.
    public var corsOrigins: [String]
    /// Scheme and authority of every URL the API returns; nil: the request's own (see ``PublicBaseURL``).
    public var publicURL: URL?
    /// Keys of the signed `file_url` links, the signing one first (all verify: rotation).
    public var fileURLKeys: Secret<[String]>
    /// How long a `file_url` link works after it was handed out (at least; see ``FileLinks``).
    public var fileURLLifetime: Duration
    /// `Cache-Control: max-age` of downloads by the owner's own credentials.
    public var downloadMaxAge: Duration

    public init(environment env: EnvironmentReader) throws {
        httpHost = env.string("GATEWAY_HTTP_HOST", default: "127.0.0.1", "Numeric address the HTTP server binds (0.0.0.0 in containers).")
        httpPort = try env.int("GATEWAY_HTTP_PORT", default: 8080, in: 0...65535, "Port of the HTTP server; 0 picks a free port.")
        let proxies = env.list(
            "GATEWAY_TRUSTED_PROXIES", default: [],
            "Proxies (addresses or CIDR blocks, comma-separated) whose X-Forwarded-For is believed; the client IP goes to Audit.")
        do { trustedProxies = try TrustedProxies(proxies) } catch {
            throw ConfigurationError(
                variable: "GATEWAY_TRUSTED_PROXIES", value: proxies.joined(separator: ","), expected: "IP addresses or CIDR blocks")
        }
        let hsts = env.string(
            "GATEWAY_HSTS", default: "max-age=31536000; includeSubDomains",
            "Strict-Transport-Security sent on every answer to a request a trusted proxy (GATEWAY_TRUSTED_PROXIES) forwarded as HTTPS (X-Forwarded-Proto: https); off: never sent."
        )
        guard hsts == "off" || hsts.hasPrefix("max-age="), !hsts.contains(where: { $0.isNewline }) else {
            throw ConfigurationError(variable: "GATEWAY_HSTS", value: hsts, expected: "a Strict-Transport-Security value (max-age=…) or off")
        }
        strictTransportSecurity = hsts == "off" ? nil : hsts
        maxBodyBytes = try env.int(
            "GATEWAY_MAX_BODY_BYTES", default: 64 * 1024, in: 1024...(16 << 20), "Largest JSON request body in bytes (413 above).")
        connectionLimits = SlowClientLimits(
            headerTimeout: try env.duration(
                "GATEWAY_HEADER_TIMEOUT", default: .seconds(10),
                "How long a request's head may take to arrive (from the connection's start or the previous response's end); a slower client is disconnected (slowloris)."
            ),
            bodyTimeout: try env.duration(
                "GATEWAY_BODY_TIMEOUT", default: .seconds(30),
                "The longest silence allowed inside a request body (uploads may be long, not stalled); the connection is closed after it."),
            writeTimeout: try env.duration(
                "GATEWAY_WRITE_TIMEOUT", default: .seconds(30),
                "How long a response may stay blocked on a client that does not read it (a download nobody reads); the connection is closed after it."
            ),
            maximumConnections: try env.int(
                "GATEWAY_MAX_CONNECTIONS", default: 4096, in: 1...1_000_000,
                "Client connections open at once; one more is closed as soon as it is accepted."))
        idleTimeout = try env.duration(
            "GATEWAY_IDLE_TIMEOUT", default: .seconds(60), "How long a keep-alive connection may sit idle between requests before it is closed.")
        documentsChunkSize = try env.int(
            "GATEWAY_DOCUMENTS_CHUNK_SIZE", default: 1 << 20, in: 4096...(16 << 20),
            "Bytes per Documents read/append call when streaming document bytes and tus uploads; at most the Documents service's DOCUMENTS_CHUNK_SIZE."
        )
        tusMaxSize = Int64(
            try env.int(
                "GATEWAY_TUS_MAX_SIZE", default: 4 << 30, in: 1...(1 << 40),
                "Largest upload announced to tus clients (Tus-Max-Size); keep it equal to DOCUMENTS_MAX_FILE_SIZE."))
        busTimeout = try env.duration("GATEWAY_BUS_TIMEOUT", default: .seconds(5), "Deadline of one bus call made for a request (504 past it).")
        acceptBatchesInFlight = try env.int(
            "GATEWAY_ACCEPT_BATCHES_IN_FLIGHT", default: 1, in: 1...64,
            "Terms acceptances under way at once as batches to Accounts; acceptances arriving meanwhile wait and go together in the next (1, the default: strict group commit, the fewest and largest batches)."
        )
        sessionRevocationPoll = try env.duration(
            "GATEWAY_SESSION_REVOCATION_POLL", default: .seconds(1),
            "How often the gateway catches up on Accounts' session revocations (events also arrive live); bounds how late a missed revocation event is applied."
        )
        sessionViewMaxStaleness = try env.duration(
            "GATEWAY_SESSION_MAX_STALENESS", default: .seconds(5),
            "How long the gateway verifies session tokens itself without word from Accounts; past it every token is checked by Accounts (fail closed)."
        )
        sessionCacheEntries = try env.int(
            "GATEWAY_SESSION_CACHE_ENTRIES", default: 250_000, in: 1000...10_000_000,
            "Verified session tokens the gateway remembers, so a token seen again skips its signature check (an Ed25519 verification, ~130 µs of CPU); size it for the tokens live at once (each lives 15 minutes, so about the sessions active in 15 minutes). Memory: about 250 bytes each once held (53 MiB of resident memory at 250,000, up to 68 MiB as they turn over; 7 MiB at 30,000); past it the soonest to expire are evicted (gateway_session_cache_evictions_total{reason=\"capacity\"})."
        )
        legalRefresh = try env.duration(
            "GATEWAY_LEGAL_REFRESH", default: .seconds(5),
            "How often the gateway revalidates its in-memory copy of the legal texts with Legal, besides following legal.published events: a version whose event was lost is served within this (plus one bus round trip)."
        )
        guard legalRefresh >= .milliseconds(100), legalRefresh <= .seconds(3600) else {
            throw ConfigurationError(
                variable: "GATEWAY_LEGAL_REFRESH", value: "\(legalRefresh.inMilliseconds)ms", expected: "a duration from 100ms to 1h")
        }
        legacyUnauthenticatedClients = try env.bool(
            "GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS", default: false,
            "Let seed 004's client (no Authorization header) call /api/terms, /api/users and accept-tos; logged loudly. Never in production.")
        publicOperations = try env.bool(
            "GATEWAY_PUBLIC_OPERATIONS", default: false,
            "Also serve /readyz and /metrics on the API port; off: only /healthz is there, and readiness details and metrics stay on HEALTH_PORT for the operator, not the internet."
        )
        let bundle = env.string(
            "GATEWAY_APPLE_BUNDLE_ID", default: "",
            "Audience (bundle id) of Apple identity tokens accepted as credentials on the seed routes; empty: not accepted.")
        appleBundleID = bundle.isEmpty ? nil : bundle
        let keySet = env.string(
            "GATEWAY_APPLE_JWKS", default: "https://appleid.apple.com/auth/keys", "Where Apple's public keys come from: an https URL or a file path.")
        do { appleKeySet = try AppleKeySource(configuration: keySet) } catch {
            throw ConfigurationError(variable: "GATEWAY_APPLE_JWKS", value: keySet, expected: "an https URL or a file path")
        }
        peers = try GatewayPeers(environment: env)
        rateLimits = try RateLimitSettings(environment: env)
        corsOrigins = env.list(
            "GATEWAY_CORS_ORIGINS", default: [],
            "Browser origins allowed to call the API from a web page (comma-separated, exact `scheme://host[:port]`, e.g. https://app.example.com); empty: no CORS headers, browsers keep cross-origin calls out."
        )
        for origin in corsOrigins where !CORSPolicy.isOrigin(origin) {
            throw ConfigurationError(
                variable: "GATEWAY_CORS_ORIGINS", value: origin, expected: "origins like https://app.example.com (scheme://host[:port], no path)")
        }
        let publicText = env.string(
            "GATEWAY_PUBLIC_URL", default: "",
            "Scheme and host (and port, path prefix) that every URL the API returns starts with, e.g. https://api.example.com; empty: the request's Host (or a trusted proxy's X-Forwarded-Host/-Proto)."
        )
        if publicText.isEmpty {
            publicURL = nil
        } else {
            guard let url = URL(string: publicText), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil,
                url.query == nil, url.fragment == nil
            else { throw ConfigurationError(variable: "GATEWAY_PUBLIC_URL", value: publicText, expected: "an http(s) URL without query") }
            publicURL = url
        }
        let keys = env.secret(
            "GATEWAY_FILE_URL_KEYS", default: "",
            "Comma-separated HMAC keys (32+ characters each) signing file_url download links; the first signs, all verify (rotate by prepending a new key, drop the old one a lifetime later). Empty: a random key per process (links die with it; set it when several gateways serve one API)."
        )
        let parsed = keys.revealed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard parsed.allSatisfy({ $0.utf8.count >= 32 }) else {
            throw ConfigurationError(variable: "GATEWAY_FILE_URL_KEYS", value: nil, expected: "keys of at least 32 characters")
        }
        fileURLKeys = Secret(parsed)
        fileURLLifetime = try env.duration(
            "GATEWAY_FILE_URL_LIFETIME", default: .seconds(3600),
            "How long a document's file_url (a signed download link) works after the row was read, at least; reading the row again gives a fresh link."
        )
        guard fileURLLifetime >= .seconds(60), fileURLLifetime <= .seconds(7 * 24 * 3600) else {
            throw ConfigurationError(
                variable: "GATEWAY_FILE_URL_LIFETIME", value: "\(fileURLLifetime.inSeconds)s", expected: "a duration from 1m to 7 days")
        }
        downloadMaxAge = try env.duration(
            "GATEWAY_DOWNLOAD_MAX_AGE", default: .seconds(3600),
            "Cache-Control max-age of document downloads (private, immutable: the bytes of a document never change); a signed link's is at most its remaining life."
        )
    }
}
