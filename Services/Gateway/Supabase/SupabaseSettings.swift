import GatewayService
import ServiceKit

/// The Supabase module's settings, read from the environment beside the core's.
///
/// | Variable | Default | Description |
/// | --- | --- | --- |
/// | `GATEWAY_JWT_SECRET` | (empty) | HMAC secret of the Supabase-style `anon` key (HS256). |
package struct SupabaseSettings: EnvironmentSettings {
    /// Empty: no anon key (`/rest/v1` takes session tokens only, `/auth/v1` checks no `apikey`).
    package var jwtSecret: Secret<String>

    /// `GATEWAY_JWT_SECRET`, read and checked in one place for the running gateway and for
    /// `--print-anon-key`: a key printed from the raw variable (untrimmed) was refused by the
    /// gateway, which holds the trimmed secret.
    package init(environment env: EnvironmentReader) throws {
        jwtSecret = env.secret(
            "GATEWAY_JWT_SECRET", default: "",
            "HMAC-SHA256 secret of the Supabase-style anon key (`Gateway --print-anon-key`); empty: /rest/v1 takes session tokens only.")
        if !jwtSecret.revealed.isEmpty, jwtSecret.revealed.utf8.count < AnonymousKey.minimumSecretBytes {
            throw ConfigurationError(
                variable: "GATEWAY_JWT_SECRET", value: nil, expected: "at least \(AnonymousKey.minimumSecretBytes) characters")
        }
    }

    /// The anon key of ``jwtSecret``; nil when none is set.
    package var anonymousKey: AnonymousKey? { AnonymousKey(secret: jwtSecret.revealed) }
}
