import Foundation
import Postgres
import ServiceKit

/// The Legal service as ``BusServiceMain`` runs it: name and schema `legal`, the system's
/// default addresses for it (RPC 5551, events 5651, health 5751), and its migrations, shipped as
/// resource files (`Migrations/NNNN_name.sql`, numbered from 0100).
public enum LegalServiceDescription: ServiceDescription {
    public static let name = ServiceName.legal.rawValue
    public static var defaultRPCBind: String { ServiceName.legal.defaultRPCEndpoint }
    public static var defaultEventsBind: String { ServiceName.legal.defaultEventsEndpoint }
    public static var defaultHealthPort: Int { ServiceName.legal.defaultHealthPort }

    public static func migrations() throws -> [Migration] {
        try Migration.load(directory: try resourceDirectory("Migrations"))
    }

    /// Everything the service does once the runtime stands: seed the default texts (first start
    /// only), then register the handlers. Called from `main` inside ``BusServiceMain/run(_:configure:)``.
    public static func configure(_ context: BusServiceContext) async throws {
        let store = LegalStore(pool: context.pool, schema: context.name)
        try await LegalSeeder(store: store, outbox: context.outbox, logger: context.logger).seedDefaults()
        LegalHandlers(store: store, outbox: context.outbox).register(on: context.server)
    }

    /// A folder copied into the module's resource bundle.
    static func resourceDirectory(_ name: String) throws -> URL {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name) in the LegalService resource bundle"])
        }
        return url
    }
}
