import Foundation
import ServiceKit

/// The HTTP gateway executable's entry point: the only edge the app talks to. Its own executable
/// (`Services/Gateway/Main`) and the image's multicall `recruiting-compass` (`Services/MultiCall`)
/// both call it. It starts the gateway on the ServiceKit runtime and prints
/// `ready http=<port> health=<port>` once the server listens, for supervisors and tests.
/// `--print-anon-key` prints the Supabase-style anon key made from `GATEWAY_JWT_SECRET`.
public enum GatewayExecutable {
    public static func main() async -> Never {
        if CommandLine.arguments.contains("--print-anon-key") {
            let secret: String
            do { secret = try GatewaySettings.jwtSecret(EnvironmentReader()).revealed } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                exit(1)
            }
            // Empty passes the settings' check (no anon key) but makes no key to print.
            guard let key = AnonymousKey(secret: secret) else {
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
        await ServiceMain.run(name: "gateway", defaultHealthPort: 5750, settings: GatewaySettings.self) { @Sendable runtime, settings in
            try await GatewayApplication.configure(runtime, settings: settings) { port in
                runtime.announceReady(["http": port, "health": runtime.healthPort])
            }
        }
    }
}
