import ArgumentParser
import ServiceKit

/// `compass env`: the environment variables the bus commands read (the services' own names).
struct HelpEnvironment: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env", abstract: "List the environment variables compass reads, as a markdown table.")

    func run() throws {
        let reader = EnvironmentReader()
        _ = try BusSettings(defaultRPCBind: "", defaultEventsBind: "", environment: reader)
        print(reader.variables.markdownTable())
    }
}
