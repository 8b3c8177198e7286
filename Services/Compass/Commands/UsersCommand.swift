import ArgumentParser
import Bus
import Contracts
import Foundation

/// `compass users find|show|delete`: look people up by user id, Apple subject or email, and
/// remove an account (a test user, or on a person's request) through the same deletion as the
/// app's own: `accounts.request_deletion` then `accounts.confirm_deletion`, so the account is
/// deleted with its sessions, `account.deleted` goes out (Documents and Audit erase), the Apple
/// grant is revoked and a signed certificate is issued. Acts as the operator principal.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users", abstract: "Find, show and delete user accounts.", subcommands: [Find.self, Show.self, Delete.self])

    /// Who to look for: a user id (UUID), an email (contains `@`), or else an Apple subject.
    struct Who: ParsableArguments {
        @Argument(help: "A user id, an email address, or an Apple subject (Sign in with Apple's `sub`).") var who: String
        @Flag(help: "Log bus details to standard error.") var verbose = false

        var request: AccountsFindUsers.Request {
            if let id = UUID(uuidString: who) { return .init(userId: id) }
            if who.contains("@") { return .init(email: who) }
            return .init(appleId: who)
        }

        /// The users matching, as Accounts shows them.
        func find(_ bus: BusAccess) async throws -> [AccountUser] {
            guard !who.isEmpty else { throw ValidationError("give a user id, an email or an Apple subject") }
            return try await bus.call(AccountsFindUsers.self, request).users
        }

        /// The one user matching; an error naming the candidates when there are several, or none.
        func one(_ bus: BusAccess) async throws -> (user: AccountUser, id: UUID) {
            let users = try await find(bus)
            guard users.count == 1, let user = users.first, let id = user.id else {
                if users.isEmpty { throw CLIError("no user matches \(who)") }
                let ids = users.compactMap { $0.id?.uuidString.lowercased() }.joined(separator: ", ")
                throw CLIError("\(users.count) users match \(who): \(ids); name one by its id")
            }
            return (user, id)
        }
    }

    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the users with this id, Apple subject or email, one a line.")
        @OptionGroup var who: Who

        func run() async throws {
            let users = try await who.find(try BusAccess(verbose: who.verbose))
            for user in users { print(UsersCommand.line(user)) }
            if users.isEmpty { throw CLIError("no user matches \(who.who)") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One user as JSON, with what deleting the account would remove.")
        @OptionGroup var who: Who

        func run() async throws {
            let bus = try BusAccess(verbose: who.verbose)
            let found = try await who.one(bus)
            let preview = try await bus.call(AccountsDeletionPreview.self, .init(userId: found.id))
            print(try UsersCommand.json(ShowOutput(user: found.user, deletionPreview: preview)))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete one account through the same deletion as the app's (certificate, Apple grant revocation).",
            discussion: "Without --yes, shows what would be deleted and changes nothing.")
        @OptionGroup var who: Who
        @Flag(help: "Really delete.") var yes = false

        func run() async throws {
            let bus = try BusAccess(verbose: who.verbose)
            let found = try await who.one(bus)
            guard yes else {
                let preview = try await bus.call(AccountsDeletionPreview.self, .init(userId: found.id))
                print(UsersCommand.line(found.user))
                for item in preview.deleted { print("  deletes \(item.category): \(item.count.map(String.init) ?? "?")") }
                print("nothing deleted: add --yes to delete this account")
                throw ExitCode(1)
            }
            let request = try await bus.call(AccountsRequestDeletion.self, .init(userId: found.id))
            // Apple's revocation may take a moment; the reply waits for it briefly.
            let done = try await bus.call(
                AccountsConfirmDeletion.self, .init(userId: found.id, requestId: request.requestId), timeout: .seconds(30))
            print("deleted \(found.id.uuidString.lowercased()) at \(ISO8601DateFormatter().string(from: done.deletedAt))")
            if let certificate = done.certificate {
                print("certificate \(certificate.certificateId.uuidString.lowercased())")
                if let grant = certificate.claims.appleGrant { print("apple grant \(grant.status.rawValue)") }
            }
        }
    }

    struct ShowOutput: Encodable {
        let user: AccountUser
        let deletionPreview: DeletionPreview
    }

    /// `id  apple-subject  email  name  state  created`, tab-separated.
    static func line(_ user: AccountUser) -> String {
        let created = user.createdAt.map { ISO8601DateFormatter().string(from: $0) } ?? "-"
        return [user.id?.uuidString.lowercased() ?? "-", user.appleId, user.email ?? "-", user.name ?? "-", user.state ?? "-", created]
            .joined(separator: "\t")
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try Call.pretty(BusJSON.encode(value)), as: UTF8.self)
    }
}
