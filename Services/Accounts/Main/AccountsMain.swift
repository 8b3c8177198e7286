import AccountsService
import Foundation
import ServiceKit

/// The Accounts service executable: users, eligibility and terms acceptance over the bus.
/// Everything is in `AccountsService`; this only starts it, and prints a `ready` line once the
/// handlers are in place so a supervisor or test can wait for it.
@main
struct AccountsMain {
    static func main() async {
        await BusServiceMain.run(AccountsServiceDescription.self, settings: AccountsSettings.self) { context, settings in
            try await AccountsServiceDescription.configure(context, settings: settings)
            context.runtime.announceReady(["health": context.runtime.healthPort])
        }
    }
}
