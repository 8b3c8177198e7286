import ArgumentParser

/// `compass`: the operator's command line for a Recruiting Compass deployment. It runs the whole
/// system locally (`up`), looks at it (`status`, `events`), talks to any service over the bus
/// (`call`, `legal`, `audit`, `users`) makes a deployment's keys (`keys generate`) and its database roles (`db roles`).
///
/// Bus commands read the same environment variables as the services (`LEGAL_RPC_ENDPOINTS`,
/// `BUS_SECRET_KEY`, `AUDIT_PUBLIC_KEY`, …; `compass --help-env` lists them), so pointing the CLI
/// at a deployment is the same as configuring a service for it. With CURVE on, the CLI's key must
/// be admitted under the name `operator`.
struct Compass: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compass",
        abstract: "Run, inspect and operate the Recruiting Compass backend.",
        subcommands: [
            Up.self, Status.self, Call.self, Events.self, LegalCommand.self, AuditCommand.self, UsersCommand.self, Load.self, Keys.self,
            DatabaseCommand.self, DocumentsCommand.self,
            HelpEnvironment.self,
        ])
}

/// The `compass` executable's entry point. Its own executable (`Services/Compass/Main`) and the
/// image's multicall `recruiting-compass` (`Services/MultiCall`) both call it.
public enum CompassExecutable {
    public static func main() async {
        await Compass.main()
    }
}
