import AuditService
import Foundation
import ServiceKit

/// The `audit` executable: the consent record (see ``AuditService``).
@main
struct AuditMain {
    static func main() async {
        await BusServiceMain.run(AuditServiceDescription.self, settings: AuditSettings.self) { context, settings in
            try await AuditService.configure(context, settings: settings)
            context.runtime.announceReady(["health": context.runtime.healthPort])
        }
    }
}
