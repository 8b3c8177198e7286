import ArgumentParser
import ServiceKit

/// `compass env`: the environment variables compass reads: the bus commands' (the services' own
/// names) and `compass db roles`' (the deployment's database administrator and role passwords).
struct HelpEnvironment: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env", abstract: "List the environment variables compass reads, as a markdown table.")

    func run() throws {
        let reader = EnvironmentReader()
        _ = try BusSettings(defaultRPCBind: "", defaultEventsBind: "", environment: reader)
        DatabaseCommand.Roles.declare(in: reader)
        print(reader.variables.markdownTable())
    }
}
