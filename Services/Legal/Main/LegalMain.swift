import Foundation
import LegalService
import ServiceKit

/// The Legal service executable: versioned privacy policy and terms of service over the bus.
/// Everything is in `LegalService`; this only starts it, and prints a `ready` line once the
/// handlers are in place so a supervisor or test can wait for it.
@main
struct LegalMain {
    static func main() async {
        await BusServiceMain.run(LegalServiceDescription.self) { context in
            try await LegalServiceDescription.configure(context)
            context.runtime.announceReady(["health": context.runtime.healthPort])
        }
    }
}
