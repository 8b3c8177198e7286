import Bus
import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

/// `accounts.get_or_create`, every branch of seed 004's `getOrCreateUser`, against the real
/// Legal, Audit and Accounts executables and PostgreSQL.
@Suite(.serialized) struct SignUpTests {
    @Test func newUserInAnAllowedStateIsCreatedWithEligibilityAndTermsRecorded() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            let user = try await harness.signUp(state: "al")
            let id = try #require(user.id)
            #expect(user.state == "AL" && user.hasConfirmedEligibility && user.eligibilityConfirmedAt != nil)
            #expect(user.tosVersion == version && user.tosAcceptedAt != nil && user.eligibilityRulesVersion == "2025-12-12")
            #expect(user.hasAcceptedTOS && !user.needsToAcceptTOS)
            #expect(user.email == "a@example.com" && user.name == "Alex Athlete" && user.createdAt != nil)

            let records = try await harness.auditHistory(id)
            #expect(records.count == 1)
            #expect(records.first?.receipt.action == .accept && records.first?.receipt.version == version)
            #expect(records.first?.clientIP == "203.0.113.9" && records.first?.userAgent == "PlayoffChallenge/1.0 iOS")
            #expect(try await harness.confirmations(id) == 1)

            let read = try await harness.get(id)
            #expect(read == user)
        }
    }

    @Test func everyRestrictedStateIsRefusedWithTheSeedsMessageAndNothingStored() async throws {
        try await AccountsHarness.run { harness in
            for state in ["NV", "HI", "ID", "MT", "WA", "nv"] {
                let error = try await harness.refusal { try await harness.signUp(appleId: "apple.\(state)", state: state) }
                #expect(error.code == .restrictedState, "\(state)")
                #expect(error.message == "Fantasy contests are not available in your state")
                #expect(error.code.httpStatus == 403)
            }
            #expect(try await harness.userCount() == 0)
            #expect(try await harness.auditRecordCount() == 0)
        }
    }

    @Test func invalidStateMissingCertificationAndOverlongTermsVersionAreRefusedWithoutWriting() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            for state in ["XX", "PR", "", "California", "C"] {
                let error = try await harness.refusal {
                    try await harness.getOrCreate(.init(appleId: "apple.s", state: state, eligibilityCertified: true, tosVersion: version))
                }
                #expect(error.code == .invalidArgument, "\(state)")
            }
            for certified in [false, nil] as [Bool?] {
                let error = try await harness.refusal {
                    try await harness.getOrCreate(.init(appleId: "apple.c", state: "TX", eligibilityCertified: certified, tosVersion: version))
                }
                #expect(error.code == .invalidArgument)
            }
            // Legal's rule for a version (LegalVersionRule): 33 characters, or a '/', never named a document.
            for malformed in [String(repeating: "9", count: 33), "1/0"] {
                let refused = try await harness.refusal {
                    try await harness.getOrCreate(.init(appleId: "apple.t", state: "TX", eligibilityCertified: true, tosVersion: malformed))
                }
                #expect(refused.code == .invalidArgument && refused.message.hasPrefix("tosVersion"), "\(refused)")
            }
            let empty = try await harness.refusal { try await harness.getOrCreate(.init(appleId: "")) }
            #expect(empty.code == .invalidArgument)
            let badAddress = try await harness.refusal {
                try await harness.getOrCreate(
                    .init(
                        appleId: "apple.ip", state: "TX", eligibilityCertified: true, tosVersion: version, clientIP: "not-an-address"))
            }
            #expect(badAddress.code == .invalidArgument)
            #expect(try await harness.userCount() == 0)
            #expect(try await harness.auditRecordCount() == 0)
        }
    }

    @Test func newUserWithoutStateIsUnconfirmedAndNotStoredUntilEligibilityCompletes() async throws {
        try await AccountsHarness.run { harness in
            let first = try await harness.getOrCreate(.init(appleId: "apple.new", email: "n@example.com", name: "Nia"))
            #expect(first.id == nil && !first.hasConfirmedEligibility && !first.hasAcceptedTOS && first.needsToAcceptTOS)
            #expect(first.appleId == "apple.new" && first.email == "n@example.com")
            #expect(try await harness.userCount() == 0)

            let completed = try await harness.signUp(appleId: "apple.new", state: "NY", email: "n@example.com", name: "Nia")
            #expect(completed.id != nil && completed.hasConfirmedEligibility && completed.hasAcceptedTOS)
            #expect(try await harness.userCount() == 1)
        }
    }

    @Test func existingUserIsReturnedUnchangedWithOnlyBlanksFilled() async throws {
        try await AccountsHarness.run { harness in
            let created = try await harness.signUp(appleId: "apple.existing", state: "TX", email: nil, name: "Sam")
            let id = try #require(created.id)
            // Sign-in again (no compliance fields, as the app's first call), other details.
            let again = try await harness.getOrCreate(.init(appleId: "apple.existing", email: "sam@example.com", name: "Other"))
            #expect(again.id == id && again.state == "TX" && again.hasConfirmedEligibility)
            #expect(again.email == "sam@example.com" && again.name == "Sam")
            #expect(again.tosVersion == created.tosVersion && again.tosAcceptedAt == created.tosAcceptedAt)
            // Compliance fields on an existing user change nothing, even a restricted state.
            let restricted = try await harness.signUp(appleId: "apple.existing", state: "NV")
            #expect(restricted.id == id && restricted.state == "TX")
            #expect(try await harness.userCount() == 1)
            #expect(try await harness.auditHistory(id).count == 1)
        }
    }

    @Test func aRetriedSignUpRecordsTheAcceptanceOnce() async throws {
        try await AccountsHarness.run { harness in
            let version = try await harness.currentTerms()
            let request = AccountsGetOrCreate.Request(
                appleId: "apple.retry", state: "OH", eligibilityCertified: true, tosVersion: version, clientIP: "203.0.113.1")
            async let one = harness.getOrCreate(request)
            async let two = harness.getOrCreate(request)
            let (a, b) = try await (one, two)
            #expect(a.id != nil && a.id == b.id)
            #expect(try await harness.userCount() == 1)
            #expect(try await harness.auditHistory(try #require(a.id)).count == 1)
        }
    }

    @Test func principalsActOnlyForThemselves() async throws {
        try await AccountsHarness.run { harness in
            let user = try #require(try await harness.signUp().id)
            let other = UUID()
            let denied = try await harness.refusal { try await harness.get(user, as: .user(other.uuidString)) }
            #expect(denied.code == .forbidden)
            let anonymous = try await harness.refusal { try await harness.get(user, as: .anonymous) }
            #expect(anonymous.code == .unauthenticated)
            let asUser = try await harness.refusal {
                try await harness.accountsClient.call(AccountsGetOrCreate.self, .init(appleId: "x"), principal: .user(user.uuidString))
            }
            #expect(asUser.code == .forbidden)
            #expect(try await harness.get(user, as: .service("gateway")).id == user)
            let missing = try await harness.refusal { try await harness.get(other, as: .service("gateway")) }
            #expect(missing.code == .notFound)
        }
    }
}

extension AccountsHarness {
    /// The ``BusError`` `body` fails with (a test failure when it succeeds).
    func refusal<T: Sendable>(_ body: () async throws -> T) async throws -> BusError {
        do {
            let value = try await body()
            Issue.record("expected a refusal, got \(value)")
            return BusError(.internal, "no error")
        } catch let error as BusError { return error }
    }

    func userCount() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM accounts.users")[0].decode(Int.self, column: 0) }
    }

    func confirmations(_ id: UUID) async throws -> Int {
        try await database.pool.withConnection { db in
            try db.query("SELECT count(*)::bigint FROM accounts.eligibility_confirmations WHERE user_id = $1", id)[0].decode(Int.self, column: 0)
        }
    }

    func auditRecordCount() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM audit.records")[0].decode(Int.self, column: 0) }
    }
}
