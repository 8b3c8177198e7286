import Bus
import GatewayService
import HTTPTypes

/// The Supabase-compatible API, plugged into the gateway's core as a ``RouteModule``: Supabase
/// Auth (GoTrue) under `/auth/v1`, PostgREST under `/rest/v1`, Storage under `/storage/v1`, and
/// the `anon` key (HS256) those clients send, so an app built on supabase-swift, supabase-js or
/// supabase-py works unchanged. Its routes call the core's flows (sessions, acceptances, the
/// documents' bytes and links), so the same account, sessions, records and limits serve both
/// doors.
package struct SupabaseModule: RouteModule {
    let anonymousKey: AnonymousKey?

    /// `apikey`: the header every Supabase client sends its key in (Auth and PostgREST check it).
    static let apiKeyHeader = HTTPField.Name("apikey")!

    package init(settings: SupabaseSettings) {
        anonymousKey = settings.anonymousKey
    }

    package var tokenKinds: [any TokenKind] { anonymousKey.map { [$0] } ?? [] }

    package var unmatchedPaths: [UnmatchedPathErrors.Space] {
        [
            .init(GoTrueRoutes.prefix, GoTrueErrors()),
            .init(PostgRESTRoutes.prefix, includingPrefix: true, PostgRESTErrors()),
            .init(StorageRoutes.prefix, StorageErrors()),
        ]
    }

    /// What supabase-js/-swift/-py send besides the core's headers, and read back.
    package var corsRequestHeaders: [String] {
        ["apikey", "x-client-info", "x-supabase-api-version", "prefer", "accept-profile", "content-profile", "x-upsert"]
    }
    package var corsExposedHeaders: [String] { ["Preference-Applied", "X-Supabase-Api-Version"] }

    package var summary: String { "a Supabase-compatible subset (Auth, PostgREST and Storage)" }

    package func register(_ gateway: GatewayRoutes) {
        GoTrueRoutes(
            services: gateway.services, authenticator: gateway.authenticator, flows: gateway.sessionFlows, limits: gateway.limits,
            anonymousKey: anonymousKey, maxBodyBytes: gateway.maxBodyBytes
        ).register(on: gateway.family(prefix: GoTrueRoutes.prefix, errors: GoTrueErrors()))
        PostgRESTRoutes(
            services: gateway.services, texts: gateway.legalTexts, authenticator: gateway.authenticator, acceptances: gateway.acceptances,
            limits: gateway.limits, maxBodyBytes: gateway.maxBodyBytes, publicBase: gateway.publicBase, fileLinks: gateway.fileLinks
        ).register(on: gateway.family(prefix: PostgRESTRoutes.prefix, errors: PostgRESTErrors()))
        StorageRoutes(
            services: gateway.services, authenticator: gateway.authenticator, bytes: gateway.bytes, maxBodyBytes: gateway.maxBodyBytes,
            fileLinks: gateway.fileLinks
        ).register(on: gateway.family(prefix: StorageRoutes.prefix, errors: StorageErrors()))
    }
}
