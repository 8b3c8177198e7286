import ServiceKit

/// The `Legal` executable's entry point: versioned privacy policy and terms of service over the
/// bus. Its own executable (`Services/Legal/Main`) and the image's multicall `recruiting-compass`
/// (`Services/MultiCall`) both call it; it prints a `ready` line once the handlers are in place so
/// a supervisor or test can wait for it.
public enum LegalExecutable {
    public static func main() async -> Never {
        await BusServiceMain.run(LegalServiceDescription.self) { context in
            try await LegalServiceDescription.configure(context)
            context.runtime.announceReadyOnceServing()
        }
    }
}
