import ServiceKit

/// The `Accounts` executable's entry point: users, eligibility and terms acceptance over the bus.
/// Its own executable (`Services/Accounts/Main`) and the image's multicall `recruiting-compass`
/// (`Services/MultiCall`) both call it; it prints a `ready` line once the handlers are in place so
/// a supervisor or test can wait for it.
public enum AccountsExecutable {
    public static func main() async -> Never {
        await BusServiceMain.run(AccountsServiceDescription.self, settings: AccountsSettings.self) { context, settings in
            try await AccountsServiceDescription.configure(context, settings: settings)
            context.runtime.announceReadyOnceServing()
        }
    }
}
