import Bus
import Foundation
import Hummingbird
import Identity
import Logging
import NIOCore
import ServiceKit
import ServiceLifecycle

/// Assembles the gateway on a ServiceKit runtime: bus clients, the router with every route, and
/// the Hummingbird server as one of the runtime's services (so SIGTERM drains it gracefully).
public enum GatewayApplication {
    /// The services the gateway calls.
    static let peers: [ServiceName] = [.legal, .accounts, .audit, .documents]

    /// Registers everything on `runtime`; `onListening` receives the bound HTTP port.
    package static func configure(
        _ runtime: ServiceRuntime, settings: GatewaySettings, modules: [any RouteModule],
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let logger = runtime.logger
        // Before the first socket opens: every bus socket of the gateway follows the setting.
        BusEventLoopMode.use(settings.peers.eventLoop)
        let services = try await ServiceClients.connect(peers, peers: settings.peers, timeout: settings.busTimeout, logger: logger)
        // Ready while any backend serves: a backend that is down turns only its own routes to 503
        // (with Retry-After), and the legal texts are served from memory. Pulling every gateway
        // out of rotation because Legal alone is down would take the whole API down with it.
        for peer in peers {
            runtime.addReadinessCheck(
                ReadinessCheck("bus.\(peer.rawValue)") {
                    services.isConnected(peer) ? .ready : .degraded("not connected: its routes answer 503")
                })
        }
        runtime.addReadinessCheck(
            ReadinessCheck("backends") {
                peers.contains(where: services.isConnected) ? .ready : .notReady("no backend connected")
            })
        if settings.legacyUnauthenticatedClients {
            logger.critical(
                "GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS is ON: seed 004 routes accept requests without credentials; anyone can act for any Apple id. Never run this way in production."
            )
        }
        let sessions = SessionVerifier(maximumStaleness: settings.sessionViewMaxStaleness, cacheLimit: settings.sessionCacheEntries)
        let accountsEvents = try await EventSubscriber.connect(
            endpoints: settings.peers.eventEndpoints[.accounts] ?? [ServiceName.accounts.defaultEventsEndpoint], topics: [""],
            security: try settings.peers.security(for: .accounts), logger: logger)
        let revocations = SessionRevocationFollower(
            verifier: sessions, client: try services.client(.accounts), events: accountsEvents,
            tickInterval: settings.sessionRevocationPoll, keyInterval: .seconds(60), logger: logger)
        // The legal texts are served from memory, kept current by Legal's events (all of them:
        // their outbox sequence shows a lost one) and a revalidation every GATEWAY_LEGAL_REFRESH.
        let legalTexts = LegalTexts(isLegalConnected: { services.isConnected(.legal) })
        let legalEvents = try await EventSubscriber.connect(
            endpoints: settings.peers.eventEndpoints[.legal] ?? [ServiceName.legal.defaultEventsEndpoint], topics: [""],
            security: try settings.peers.security(for: .legal), logger: logger)
        let follower = LegalTextsFollower(
            texts: legalTexts, legal: try services.client(.legal), events: legalEvents, interval: settings.legalRefresh,
            timeout: settings.busTimeout, logger: logger)
        let router = makeRouter(
            runtime: runtime, settings: settings, modules: modules, services: services, sessions: sessions, catalog: RouteCatalog(),
            legalTexts: legalTexts)
        // Idle keep-alive connections are closed (GATEWAY_IDLE_TIMEOUT), and every connection lives
        // under the slow-client deadlines and the connection cap (``SlowClientGuard``).
        let limits = settings.connectionLimits
        let connections = ConnectionCount()
        let app = Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [SlowClientGuard(limits: limits, connections: connections)],
                    idleTimeout: TimeAmount(settings.idleTimeout))),
            configuration: .init(address: .hostname(settings.httpHost, port: settings.httpPort), serverName: nil),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? settings.httpPort) },
            logger: logger)
        // Added before the server, so they stop after it: clients close once no request is left
        // and the followers no longer need them.
        runtime.addService(CloseOnShutdown(name: "bus clients") { await services.close() })
        runtime.addService(follower)
        runtime.addService(revocations)
        runtime.addService(app)
    }

    /// Each API with a path space of its own answers in its own error format, a request no
    /// route matched too (a client's typo still gets the body its SDK reads): the seed's, then
    /// each module's.
    static func unmatchedPathErrors(_ modules: [any RouteModule]) -> UnmatchedPathErrors {
        UnmatchedPathErrors(
            [
                .init(exactly: LegalRoutes.seedTermsPath, OnboardingErrors()),
                .init(OnboardingRoutes.prefix, includingPrefix: true, OnboardingErrors()),
            ] + modules.flatMap(\.unmatchedPaths))
    }

    /// The router with every route, recorded in `catalog`: the router-level middleware every request
    /// passes (CORS, HSTS, tracing), then one router group per family of routes (operations, the
    /// seed's onboarding, sessions, legal, accounts, consent, pages, documents and tus), each with
    /// its error body and middleware declared once (``RouteFamily``), then each module's
    /// (``RouteModule``). Without `legalTexts` kept current by a ``LegalTextsFollower``, the legal
    /// reads ask Legal on every request.
    package static func makeRouter(
        runtime: ServiceRuntime, settings: GatewaySettings, modules: [any RouteModule], services: ServiceClients, sessions: SessionVerifier,
        catalog: RouteCatalog, legalTexts: LegalTexts = LegalTexts()
    ) -> Router<GatewayContext> {
        let router = Router(context: GatewayContext.self, options: .autoGenerateHeadEndpoints)
        // Outermost, so error answers carry the CORS headers too.
        if !settings.corsOrigins.isEmpty {
            router.add(
                middleware: CORSPolicy(
                    origins: settings.corsOrigins, requestHeaders: modules.flatMap(\.corsRequestHeaders),
                    exposedHeaders: modules.flatMap(\.corsExposedHeaders)))
        }
        if let hsts = settings.strictTransportSecurity {
            router.add(middleware: StrictTransportSecurityMiddleware(value: hsts, trustedProxies: settings.trustedProxies))
        }
        router.add(middleware: RequestTracingMiddleware(trustedProxies: settings.trustedProxies, unmatched: unmatchedPathErrors(modules)))
        let apple = settings.appleBundleID.map { bundle in
            AppleIdentityVerifier(
                audiences: [bundle], keys: AppleKeyCache(source: settings.appleKeySet, logger: runtime.logger),
                logger: runtime.logger)
        }
        let authenticator = Authenticator(
            services: services, sessions: sessions, apple: apple, tokenKinds: modules.flatMap(\.tokenKinds),
            terms: TermsGate(services: services, sessions: sessions, texts: legalTexts))
        let limits = RateLimits(settings.rateLimits)
        let flows = SessionFlows(services: services, authenticator: authenticator, limits: limits)
        // One router group per family, its error body and middleware declared once (``RouteFamily``); the groups
        // that need more (a sign-in, the terms, a rate limit) are made inside each family's routes.
        func family(prefix: String = "", _ errors: any ErrorRenderer = NativeErrors()) -> RouteFamily {
            RouteFamily(router, prefix: prefix, errors: errors, catalog: catalog)
        }
        let operations = family()
        let seed = family(OnboardingErrors())
        let auth = family()
        let accounts = family()
        let documents = family()
        OperationalRoutes(runtime: runtime, includeDetails: settings.publicOperations).register(on: operations)
        let acceptances = AcceptanceBatcher(services: services, maximumInFlight: settings.acceptBatchesInFlight)
        OnboardingRoutes(
            services: services, acceptances: acceptances, authenticator: authenticator, limits: limits,
            legacyClients: settings.legacyUnauthenticatedClients, maxBodyBytes: settings.maxBodyBytes
        )
        .register(on: seed)
        SessionRoutes(services: services, authenticator: authenticator, flows: flows, limits: limits, maxBodyBytes: settings.maxBodyBytes)
            .register(on: auth)
        AppleNotificationRoutes(services: services, maxBodyBytes: settings.maxBodyBytes).register(on: auth)
        LegalRoutes(services: services, texts: legalTexts).register(on: family(), seed: seed)
        AccountRoutes(services: services, authenticator: authenticator, maxBodyBytes: settings.maxBodyBytes).register(on: accounts)
        ConsentRoutes(services: services, authenticator: authenticator, limits: limits, maxBodyBytes: settings.maxBodyBytes).register(
            on: family())
        PageRoutes(services: services, texts: legalTexts).register(on: family())
        let publicBase = PublicBaseURL(
            configured: settings.publicURL, trustedProxies: settings.trustedProxies, httpHost: settings.httpHost, httpPort: settings.httpPort)
        let fileLinks = FileLinks(settings: settings)
        let bytes = DocumentBytes(services: services, chunkSize: settings.documentsChunkSize, maxAgeSeconds: Int(settings.downloadMaxAge.inSeconds))
        DocumentRoutes(
            services: services, authenticator: authenticator, bytes: bytes, maxBodyBytes: settings.maxBodyBytes, publicBase: publicBase,
            fileLinks: fileLinks
        )
        .register(on: documents)
        TusRoutes(
            services: services, authenticator: authenticator, pump: UploadPump(services: services, chunkSize: settings.documentsChunkSize),
            maxSize: settings.tusMaxSize,
            publicBase: publicBase
        ).register(on: documents)
        PersonalDataRoutes(
            services: services, authenticator: authenticator, limits: limits, chunkSize: settings.documentsChunkSize,
            maxBodyBytes: settings.maxBodyBytes
        )
        .register(on: accounts)
        let parts = GatewayRoutes(
            services: services, authenticator: authenticator, sessionFlows: flows, acceptances: acceptances, limits: limits,
            legalTexts: legalTexts, publicBase: publicBase, fileLinks: fileLinks, bytes: bytes, maxBodyBytes: settings.maxBodyBytes,
            makeFamily: { prefix, errors in family(prefix: prefix, errors) })
        for module in modules { module.register(parts) }
        OpenAPIRoutes(catalog: catalog, version: runtime.identity.version, modules: modules.map(\.summary)).register(on: operations)
        return router
    }
}
