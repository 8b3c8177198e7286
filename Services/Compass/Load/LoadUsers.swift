import ArgumentParser
import Foundation
import Identity
import Logging

/// `compass load users N`: the benchmarks' users made in bulk (``BulkUsers``), with their session
/// tokens written to a file for a load generator.
struct LoadUsers: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Make many signed-up users at once, as Accounts' sign-up stores them, for load tests.",
        discussion: """
            Each user's sign-up acceptance of the terms in effect is recorded through Audit
            (audit.record_batch), then the users, their eligibility confirmations and one open
            session each are written into Accounts' schema as its owner (--database-url). With
            --tokens FILE each user's session token is minted with Accounts' signing key
            (ACCOUNTS_SESSION_SIGNING_KEY, ACCOUNTS_SESSION_KEY_ID, as Accounts reads them) and
            written as `user_id token` lines (mode 0600). For test deployments only: the users are
            real accounts.
            """)

    @Argument(help: "How many users.") var count: Int
    @Option(help: "Write each user's id and session token to this file.") var tokens: String?
    @Option(help: "A URL of Accounts' schema owner (default: DATABASE_URL).") var databaseURL: String?
    @Option(help: "Accounts' schema.") var schema = "accounts"
    @Flag(help: "Log bus details to standard error.") var verbose = false

    func validate() throws {
        guard count > 0 else { throw ValidationError("the count must be above 0") }
    }

    func run() async throws {
        let bus = try BusAccess(verbose: verbose)
        let keys = try tokens.map { _ in try Self.sessionKeys() }
        let made = try await Self.bulk(bus: bus, databaseURL: databaseURL, schema: schema).make(count: count) {
            FileHandle.standardError.write(Data("\($0)\n".utf8))
        }
        if let tokens, let keys {
            let text = try await BulkUsers.tokens(for: made.users, keys: keys)
            guard FileManager.default.createFile(atPath: tokens, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CLIError("cannot write --tokens \(tokens)")
            }
        }
        print("users: \(made.users.count) (terms \(made.version) accepted at sign-up)")
    }

    static func bulk(bus: BusAccess, databaseURL: String?, schema: String) throws -> BulkUsers {
        BulkUsers(bus: bus, databaseURL: try Self.databaseURL(databaseURL), schema: schema, logger: bus.logger)
    }

    /// `--database-url`, or DATABASE_URL: a URL of Accounts' schema owner.
    static func databaseURL(_ option: String?) throws -> String {
        guard let url = DatabaseURL.given(option) else {
            throw ValidationError(DatabaseURL.refusal(flag: "--database-url", role: "Accounts' schema owner"))
        }
        return url
    }

    /// Accounts' session signing key from its own variables: a bare base64 seed takes its id from
    /// ACCOUNTS_SESSION_KEY_ID (default s1), or `kid=<base64 seed>`.
    static func sessionKeys() throws -> SessionKeySet {
        let environment = ProcessInfo.processInfo.environment
        guard let seed = environment["ACCOUNTS_SESSION_SIGNING_KEY"], !seed.isEmpty else {
            throw ValidationError("--tokens needs ACCOUNTS_SESSION_SIGNING_KEY (Accounts' session signing key)")
        }
        let keyID = environment["ACCOUNTS_SESSION_KEY_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? "s1"
        let current = Data(base64Encoded: seed).map { $0.count == 32 ? "\(keyID)=\(seed)" : seed } ?? seed
        guard let keys = try? SessionKeySet(currentConfiguration: current) else {
            throw ValidationError("ACCOUNTS_SESSION_SIGNING_KEY is not base64 of a 32-byte Ed25519 seed (or kid=<seed>)")
        }
        return keys
    }
}
