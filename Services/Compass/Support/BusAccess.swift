import Bus
import Foundation
import Logging
import ServiceKit

/// The bus as the CLI sees it: the services' endpoints and keys from the environment (the same
/// variables the services read), clients and subscribers made from them, and the operator
/// principal the CLI acts as.
struct BusAccess {
    let settings: BusSettings
    let logger: Logger
    /// Who the CLI acts for: honoured only when its key is admitted as `operator` (or on a
    /// plaintext development bus).
    let principal: Principal

    init(environment: EnvironmentReader = EnvironmentReader(), verbose: Bool = false) throws {
        settings = try BusSettings(defaultRPCBind: "", defaultEventsBind: "", environment: environment)
        // As a service does at start: BUS_EVENT_LOOP, checked by the settings, picks the threads.
        BusEventLoopMode.use(settings.eventLoop)
        var logger = Logger(label: "compass") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .error
        self.logger = logger
        let user = ProcessInfo.processInfo.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "cli"
        principal = .operator(user)
    }

    /// The service a message type belongs to: its prefix (`legal.current` → legal).
    static func service(of type: String) throws -> ServiceName {
        let prefix = String(type.prefix { $0 != "." })
        guard let service = ServiceName(rawValue: prefix) else {
            let known = ServiceName.allCases.map(\.rawValue).joined(separator: ", ")
            throw CLIError("\"\(type)\" names no service: a type starts with one of \(known) (e.g. legal.current)")
        }
        return service
    }

    func client(for service: ServiceName) async throws -> RPCClient {
        let endpoints = settings.peers[service]?.rpc ?? [service.defaultRPCEndpoint]
        return try await RPCClient.connect(
            to: service.rawValue, endpoints: endpoints, security: try settings.clientSecurity(for: service), logger: logger)
    }

    func subscriber(for service: ServiceName, topics: [String]) async throws -> EventSubscriber {
        let endpoints = settings.peers[service]?.events ?? [service.defaultEventsEndpoint]
        return try await EventSubscriber.connect(
            endpoints: endpoints, topics: topics, security: try settings.clientSecurity(for: service), logger: logger)
    }

    /// Calls `method` on its service and closes the client; a service that does not answer
    /// becomes an error that names its endpoint and how to start it.
    func call<M: RPCMethod>(_ method: M.Type, _ request: M.Request, timeout: Duration = .seconds(10)) async throws -> M.Reply {
        let service = try Self.service(of: M.type)
        let client = try await client(for: service)
        defer { Task { await client.close() } }
        do {
            return try await client.call(method, request, principal: principal, timeout: timeout)
        } catch let error as BusError where error.code == .deadlineExceeded || error.code == .unavailable {
            throw unreachable(service, error)
        }
    }

    func unreachable(_ service: ServiceName, _ error: BusError) -> CLIError {
        let endpoints = (settings.peers[service]?.rpc ?? []).joined(separator: ", ")
        return CLIError(
            """
            the \(service.rawValue) service did not answer at \(endpoints) (\(error.code.rawValue): \(error.message)). \
            Start the system with `compass up` (or deploy/run), or point \(service.variablePrefix)_RPC_ENDPOINTS at it.
            """)
    }
}

/// A failure the CLI reports in one line and exits 1 on.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
