import Bus
import Hummingbird

/// A set of routes that plugs into the gateway's core from a module of its own: its route
/// families, the token kinds its callers present, the path spaces whose unmatched requests answer
/// in its error format, the headers its browser clients send and read, and its line of the OpenAPI
/// description. The core knows modules only through this; the executable says which it serves
/// (the Supabase-compatible API, `GatewaySupabase`, is one).
package protocol RouteModule: Sendable {
    /// Kinds of bearer token this module's callers present, added to the one ``Authenticator``.
    var tokenKinds: [any TokenKind] { get }
    /// The module's path spaces: a request under one that no route matched answers in its format.
    var unmatchedPaths: [UnmatchedPathErrors.Space] { get }
    /// Request headers its browser clients send (lower case), beyond the core's (``CORSPolicy``).
    var corsRequestHeaders: [String] { get }
    /// Response headers its browser clients read, beyond the core's.
    var corsExposedHeaders: [String] { get }
    /// What it serves, for the OpenAPI description (`a Supabase-compatible subset (…)`).
    var summary: String { get }
    /// Registers its routes on families it makes with ``GatewayRoutes/family(prefix:errors:)``.
    func register(_ gateway: GatewayRoutes)
}

/// What the core hands a ``RouteModule`` to build its routes with: the service clients, the one
/// authenticator, the shared flows (sessions, acceptances), the rate limits, the legal texts in
/// memory, the documents' links and bytes, and new route families on the one router.
package struct GatewayRoutes {
    package let services: ServiceClients
    package let authenticator: Authenticator
    package let sessionFlows: SessionFlows
    package let acceptances: AcceptanceBatcher
    package let limits: RateLimits
    package let legalTexts: LegalTexts
    package let publicBase: PublicBaseURL
    package let fileLinks: FileLinks
    package let bytes: DocumentBytes
    package let maxBodyBytes: Int
    let makeFamily: (String, any ErrorRenderer) -> RouteFamily

    /// A family of routes under `prefix` whose errors `errors` renders (``RouteFamily``).
    package func family(prefix: String, errors: any ErrorRenderer) -> RouteFamily {
        makeFamily(prefix, errors)
    }
}
