import Postgres

/// What a bus service is, for ``BusServiceMain``: its name (also its schema), its default
/// addresses and its migrations.
public protocol ServiceDescription {
    /// The service's name: its log label, its schema and the prefix of its message types.
    static var name: String { get }
    static var defaultRPCBind: String { get }
    static var defaultEventsBind: String { get }
    static var defaultHealthPort: Int { get }
    /// The service's own migrations, numbered from 100 (1–99 are ServiceKit's).
    static func migrations() throws -> [Migration]
}

extension ServiceDescription {
    /// Defaults for one of the system's services, from ``ServiceName``.
    public static func defaults(_ service: ServiceName) -> (rpc: String, events: String, health: Int) {
        (service.defaultRPCEndpoint, service.defaultEventsEndpoint, service.defaultHealthPort)
    }
}
