import ArgumentParser
import Foundation
import LoadKit
import Logging
import Postgres
import ServiceKit

/// `compass up`: the whole system on this machine, for development and trials.
struct Up: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run every service and the gateway locally, on a throwaway PostgreSQL unless DATABASE_URL is set.",
        discussion: """
            Without DATABASE_URL it starts a cluster in .local/pg-run (kept between runs unless --fresh)
            through deploy/pg. With --s3, documents' bytes go to a SeaweedFS started first (weed server -s3,
            data in .local/s3-run, emptied by --fresh too; S3 on base+40, default 5840) and stopped last;
            without it, DOCUMENTS_STORAGE and DOCUMENTS_S3_* pass through from the environment. Children's logs are prefixed by service; a crashed child is restarted
            with backoff. Ctrl-C or SIGTERM stops the children, then the cluster.
            Keys for local use (audit receipts, session tokens) are made once in .local/keys.
            DATABASE_URL is used as the admin: each service gets roles of its own (`compass db roles`), the
            owner's for its migrations and a runtime role that reaches only its schema, with passwords made
            anew at every start and held only in the children's environments.
            """)

    @Flag(help: "Start from an empty database.") var fresh = false
    @Option(help: "Move every port: RPC base+N, events base+10+N, health base+20+N, gateway base+30.") var basePort: Int?
    @Option(help: "Folder holding the executables; the one compass runs from by default.") var bin: String?
    @Flag(help: "Every service connects with DATABASE_URL itself, without roles of its own (a server where it may not create roles).")
    var singleDatabaseRole = false
    @Flag(help: "Keep documents' bytes in a local SeaweedFS (weed, in .local/s3-run) instead of PostgreSQL large objects.")
    var s3 = false

    func run() async throws {
        let executable = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        let binFolder = bin.map { URL(fileURLWithPath: $0) } ?? executable.deletingLastPathComponent()
        let layout = StackLayout(basePort: basePort)
        let members = layout.members.filter { FileManager.default.isExecutableFile(atPath: binFolder.appendingPathComponent($0.executable).path) }
        let missing = layout.members.filter { member in !members.contains { $0.name == member.name } }.map(\.executable)
        guard !members.isEmpty else { throw CLIError("no service executables in \(binFolder.path): build them first (swift build)") }
        if !missing.isEmpty { ConsoleOutput.say("not built, not started: \(missing.joined(separator: ", "))") }

        var environment = ProcessInfo.processInfo.environment
        // The local cluster only when no server is given.
        let needsLocalDatabase = environment["DATABASE_URL"]?.isEmpty ?? true
        let database = needsLocalDatabase ? LocalDatabase.locate(executable: executable) : nil
        if needsLocalDatabase {
            guard let database else { throw CLIError("DATABASE_URL is not set and deploy/pg was not found to start a local cluster") }
            ConsoleOutput.say("starting PostgreSQL in \(database.directory.path)")
            environment["DATABASE_URL"] = try await database.start(fresh: fresh)
        }
        let root = database?.projectRoot ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        try LocalKeys(folder: root.appendingPathComponent(".local/keys")).fill(&environment)
        environment["LOG_LEVEL"] = environment["LOG_LEVEL"] ?? "info"
        let objectStore = try s3 ? Self.objectStore(root: root, basePort: basePort, fresh: fresh) : nil
        if let objectStore { environment.merge(objectStore.store.documentsEnvironment(keys: objectStore.keys)) { _, store in store } }
        environment.merge(layout.peerEnvironment) { _, stack in stack }
        let databaseEnvironments =
            singleDatabaseRole
            ? [:] : try await Self.serviceDatabaseEnvironments(adminURL: environment["DATABASE_URL"] ?? "", services: members.compactMap(\.service))

        let supervisor = Supervisor()
        let signals = SignalWaiter(SIGINT, SIGTERM)
        let colours = [32, 33, 34, 35, 36, 31]
        do {
            if let (store, keys) = objectStore {
                try await supervisor.start(store.spec(keys: keys, colour: 37))
                try await store.ensureBucket()
                ConsoleOutput.say("seaweedfs ready: bucket \(store.bucket) at \(store.endpoint)")
            }
            for (index, member) in members.enumerated() {
                let spec = Supervisor.Spec(
                    name: member.name, executable: binFolder.appendingPathComponent(member.executable),
                    environment: Self.environment(
                        environment, layout.ownEnvironment(member), database: member.service.flatMap { databaseEnvironments[$0] },
                        singleDatabaseRole: singleDatabaseRole),
                    readyURL: "http://\(layout.host):\(member.healthPort)/readyz", colour: colours[index % colours.count])
                try await supervisor.start(spec)
                ConsoleOutput.say("\(member.name) ready")
            }
        } catch {
            ConsoleOutput.say("start-up failed: \(error)")
            await supervisor.stopAll()
            await database?.stop()
            throw ExitCode(1)
        }
        ConsoleOutput.say(Self.summary(layout, members, databaseURL: environment["DATABASE_URL"] ?? "", objectStore: objectStore?.store))
        ConsoleOutput.say(
            Self.hints(databaseURL: needsLocalDatabase ? environment["DATABASE_URL"] : nil, corsOrigins: environment["GATEWAY_CORS_ORIGINS"] ?? ""))
        if members.contains(where: { $0.httpPort != nil }), let anonKey = try? await Self.anonKey(binFolder, environment) {
            ConsoleOutput.say("anon key (the apikey Supabase clients send; public reads only): \(anonKey)")
        }
        // The same convention as the services: a line starting `ready ` for whoever waits on us.
        ConsoleOutput.write("ready \(members.map(\.name).joined(separator: ","))\n")
        let received = await signals.next()
        ConsoleOutput.say("signal \(received): stopping")
        await supervisor.stopAll()
        if let database {
            await database.stop()
            ConsoleOutput.say("PostgreSQL stopped")
        }
        ConsoleOutput.say("stopped")
    }

    /// One child's environment: the stack's, its own addresses, and its database roles' URLs. With
    /// roles, only services get a database URL, each its own (the gateway has no database).
    static func environment(
        _ stack: [String: String], _ own: [String: String], database: [String: String]?, singleDatabaseRole: Bool
    ) -> [String: String] {
        var environment = stack.merging(own) { _, own in own }
        if !singleDatabaseRole {
            environment.removeValue(forKey: "DATABASE_URL")
            environment.removeValue(forKey: "DATABASE_MIGRATION_URL")
        }
        if let database { environment.merge(database) { _, role in role } }
        return environment
    }

    /// Each service's `DATABASE_URL` (its runtime role) and `DATABASE_MIGRATION_URL` (its schema's
    /// owner) on the server `adminURL` names, after making both roles with new random passwords.
    static func serviceDatabaseEnvironments(adminURL: String, services: [ServiceName]) async throws -> [ServiceName: [String: String]] {
        var passwords: [ServiceName: ServiceDatabaseRoles.Passwords] = [:]
        for service in services {
            passwords[service] = .init(owner: ServiceRoles.generatePassword(), runtime: ServiceRoles.generatePassword())
        }
        var logger = Logger(label: "compass")
        logger.logLevel = .warning
        let roles: [ServiceName: ServiceRoles]
        do {
            roles = try await ServiceDatabaseRoles.provision(adminURL: adminURL, services: services, passwords: passwords, logger: logger)
        } catch {
            throw CLIError(
                "could not make the services' database roles (\(error)); where DATABASE_URL may not create roles, use --single-database-role")
        }
        var environments: [ServiceName: [String: String]] = [:]
        for service in services {
            guard let serviceRoles = roles[service], let password = passwords[service],
                let runtime = ServiceRoles.url(adminURL, user: serviceRoles.runtime, password: password.runtime),
                let owner = ServiceRoles.url(adminURL, user: serviceRoles.owner, password: password.owner)
            else { throw CLIError("DATABASE_URL must be a postgresql:// URL to give each service roles of its own (or use --single-database-role)") }
            environments[service] = ["DATABASE_URL": runtime, "DATABASE_MIGRATION_URL": owner]
        }
        ConsoleOutput.say("database roles ready: each service migrates as its schema's owner and serves as a role that reaches only its schema")
        return environments
    }

    /// The local SeaweedFS for `--s3` and its credentials (kept in .local/keys), emptied with `--fresh`.
    static func objectStore(root: URL, basePort: Int?, fresh: Bool) throws -> (store: LocalObjectStore, keys: S3Keys) {
        guard let store = LocalObjectStore.locate(projectRoot: root, basePort: basePort) else {
            throw CLIError("--s3 needs SeaweedFS's weed on PATH or in .local/py/seaweedfs: run deploy/lib/install-deps")
        }
        if fresh { try store.wipe() }
        return (store, try S3Keys.load(folder: root.appendingPathComponent(".local/keys")))
    }

    /// The gateway's Supabase-style anon key, made from the same secret the gateway runs with.
    static func anonKey(_ bin: URL, _ environment: [String: String]) async throws -> String {
        let gateway = bin.appendingPathComponent("Gateway").path
        return try await offPool {
            try Command.run(gateway, ["--print-anon-key"], environment: environment).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// How to reach the local database with psql (its URL carries no password: the cluster trusts
    /// local connections) and how to let a browser origin call the API.
    static func hints(databaseURL: String?, corsOrigins: String) -> String {
        var lines: [String] = []
        if let databaseURL {
            lines += [
                "  psql            export DATABASE_URL=\(databaseURL)",
                "                  then e.g.: psql \"$DATABASE_URL\" -c \"SELECT id, email, state FROM users\"  (users: read-only view of accounts.users)",
            ]
        }
        if corsOrigins.isEmpty {
            lines.append("  CORS            no browser origin allowed; allow one with: GATEWAY_CORS_ORIGINS=http://localhost:5173 deploy/run")
        } else {
            lines.append("  CORS            browser origins allowed: \(corsOrigins)")
        }
        return lines.joined(separator: "\n")
    }

    static func summary(_ layout: StackLayout, _ members: [StackLayout.Member], databaseURL: String, objectStore: LocalObjectStore?) -> String {
        var lines = ["up. Ctrl-C stops everything."]
        if let gateway = members.first(where: { $0.httpPort != nil }), let port = gateway.httpPort {
            let base = "http://\(layout.host):\(port)"
            lines += [
                "  API             \(base)/api", "  privacy policy  \(base)/legal/privacy",
                "  terms           \(base)/legal/terms", "  OpenAPI         \(base)/openapi.json",
            ]
        }
        for member in members where member.service != nil {
            lines.append(
                "  \(member.name.padding(toLength: 10, withPad: " ", startingAt: 0))rpc \(layout.rpcEndpoint(member) ?? "")  events \(layout.eventsEndpoint(member) ?? "")  metrics http://\(layout.host):\(member.healthPort)/metrics"
            )
        }
        // The URL may carry a password; show where, not who.
        let shown = URLComponents(string: databaseURL).map { "\($0.host ?? "?"):\($0.port.map(String.init) ?? "5432")\($0.path)" } ?? "(set)"
        lines.append("  PostgreSQL      \(shown)")
        if let objectStore {
            lines.append("  S3 (SeaweedFS)  \(objectStore.endpoint)/\(objectStore.bucket)  data \(objectStore.directory.path)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Development keys kept in `.local/keys` (ignored by git, mode 700) so receipts and sessions
/// stay verifiable across restarts; a key already in the environment wins.
struct LocalKeys {
    let folder: URL

    func fill(_ environment: inout [String: String]) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keys = [
            ("AUDIT_SIGNING_KEY", "audit-signing-key"), ("ACCOUNTS_SESSION_SIGNING_KEY", "session-signing-key"),
            ("GATEWAY_JWT_SECRET", "gateway-jwt-secret"), ("GATEWAY_FILE_URL_KEYS", "gateway-file-url-key"),
        ]
        for (variable, file) in keys {
            if let value = environment[variable], !value.isEmpty { continue }
            let path = folder.appendingPathComponent(file).path
            if let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty {
                environment[variable] = text.trimmingCharacters(in: .whitespacesAndNewlines)
                continue
            }
            let key = Keys.Generate.randomBase64(bytes: 32)
            guard FileManager.default.createFile(atPath: path, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CLIError("cannot write \(path)")
            }
            environment[variable] = key
        }
        let bundle = environment["ACCOUNTS_APPLE_BUNDLE_ID"] ?? "com.recruitingcompass.app"
        environment["ACCOUNTS_APPLE_BUNDLE_ID"] = bundle
        environment["GATEWAY_APPLE_BUNDLE_ID"] = environment["GATEWAY_APPLE_BUNDLE_ID"] ?? bundle
    }
}

/// Turns SIGINT/SIGTERM into an awaitable value instead of killing the process, so `up` can stop
/// its children first. Used by one task only, so it need not be Sendable.
final class SignalWaiter {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(_ numbers: Int32...) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        sources = numbers.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    func next() async -> Int32 {
        for await number in stream { return number }
        return SIGTERM
    }
}
