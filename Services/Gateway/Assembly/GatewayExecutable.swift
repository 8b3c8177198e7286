import Foundation
import GatewayService
import GatewaySupabase
import ServiceKit

/// The HTTP gateway executable's entry point: the only edge the app talks to. Its own executable
/// (`Services/Gateway/Main`) and the image's multicall `recruiting-compass` (`Services/MultiCall`)
/// both call it. It wires the core (`GatewayService`) with the route modules it serves
/// (``GatewayProcessSettings/modules``), starts the gateway on the ServiceKit runtime and prints
/// `ready http=<port> health=<port>` once the server listens, for supervisors and tests.
/// `--print-anon-key` prints the Supabase-style anon key made from `GATEWAY_JWT_SECRET`.
public enum GatewayExecutable {
    public static func main() async -> Never {
        if CommandLine.arguments.contains("--print-anon-key") { await printAnonymousKey() }
        await ServiceMain.run(name: "gateway", defaultHealthPort: 5750, settings: GatewayProcessSettings.self) { @Sendable runtime, settings in
            try await GatewayApplication.configure(runtime, settings: settings.core, modules: settings.modules) { port in
                // A health server that cannot bind fails the whole group, which ends the process.
                try? await runtime.announceReady(["http": port])
            }
        }
    }

    private static func printAnonymousKey() async -> Never {
        let settings: SupabaseSettings
        do { settings = try SupabaseSettings(environment: EnvironmentReader()) } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(1)
        }
        // Empty passes the settings' check (no anon key) but makes no key to print.
        guard let key = settings.anonymousKey else {
            FileHandle.standardError.write(Data("GATEWAY_JWT_SECRET is not set\n".utf8))
            exit(1)
        }
        guard let anonKey = try? await key.issue() else {
            FileHandle.standardError.write(Data("the anon key could not be signed\n".utf8))
            exit(1)
        }
        print(anonKey)
        exit(0)
    }
}
