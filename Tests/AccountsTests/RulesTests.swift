import AccountsService
import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// The eligibility rules: the shipped file, validation, and a change of rules on a running
/// system (restart with a new version) found by `accounts.restricted_users`.
@Suite(.serialized) struct RulesTests {
    @Test func shippedRulesAreTheSeedsList() throws {
        let rules = try EligibilityRules.bundled()
        #expect(rules.jurisdictions.count == 51 && Set(rules.jurisdictions).count == 51 && rules.jurisdictions.contains("DC"))
        #expect(Set(rules.restrictedStates) == ["NV", "HI", "ID", "MT", "WA"])
        #expect(rules.minimumAge == 18)
        #expect(rules.judge(" ca ") == .allowed("CA"))
        #expect(rules.judge("wa") == .restricted("WA"))
        #expect(rules.judge("PR") == .unknown)
    }

    @Test func badRulesAreRefused() throws {
        let good = try EligibilityRules.bundled()
        var outside = good
        outside.restrictedStates.append("PR")
        #expect(throws: RulesError.self) { try outside.validated() }
        var noVersion = good
        noVersion.version = ""
        #expect(throws: RulesError.self) { try noVersion.validated() }
        var badCode = good
        badCode.jurisdictions.append("ca")
        #expect(throws: RulesError.self) { try badCode.validated() }
    }

    @Test func theServiceRefusesToStartWithBadRules() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-bad-rules-\(UUID().uuidString).json")
        try Data(#"{"version":"x","minimumAge":18,"jurisdictions":["CA"],"restrictedStates":["NV"]}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await TestDatabase.withDatabase { database in
            let environment = AccountsHarness.accountsEnvironment(
                database, rpc: ipcEndpoint(), legal: ipcEndpoint(), audit: ipcEndpoint(), rules: file.path)
            let error = await #expect(throws: PeerProcessError.self) {
                _ = try await PeerProcess("Accounts", environment: environment, timeout: .seconds(20))
            }
            #expect("\(error.map { "\($0)" } ?? "")".contains("every restricted state must be a jurisdiction"))
        }
    }

    @Test func newRulesVersionRestrictsExistingUsersAndNewSignUps() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("accounts-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var rules = try EligibilityRules.bundled()
        rules.version = "2026-06-01"
        rules.restrictedStates.append("CA")
        let file = directory.appendingPathComponent("rules.json")
        try JSONEncoder().encode(rules).write(to: file)

        try await AccountsHarness.run { harness in
            let californian = try #require(try await harness.signUp(state: "CA").id)
            let texan = try #require(try await harness.signUp(state: "TX").id)
            let before = try await harness.restrictedUsers()
            #expect(before.rulesVersion == "2025-12-12" && before.users.isEmpty)
            let forbidden = try await harness.refusal {
                try await harness.accountsClient.call(AccountsRestrictedUsers.self, .init(), principal: .service("gateway"))
            }
            #expect(forbidden.code == .forbidden)

            try await harness.restartAccounts(rules: file.path)
            // A read sent while the new process binds may go unanswered: ask again until it answers.
            let after = try await withTimeout(.seconds(30), "restricted users after restart") {
                while true {
                    do { return try await harness.restrictedUsers() } catch let error as BusError
                        where error.code == .deadlineExceeded || error.code == .unavailable
                    { try await Task.sleep(for: .milliseconds(200)) }
                }
            }
            #expect(after.rulesVersion == "2026-06-01" && after.restrictedStates.contains("CA"))
            #expect(after.users.map(\.id) == [californian])
            #expect(after.users.first?.eligibilityRulesVersion == "2025-12-12")

            let firstPage = try await harness.accountsClient.call(
                AccountsRestrictedUsers.self, .init(limit: 1), principal: AccountsHarness.operatorPrincipal)
            #expect(firstPage.users.map(\.id) == [californian])
            let nextPage = try await harness.accountsClient.call(
                AccountsRestrictedUsers.self, .init(limit: 1, after: californian), principal: AccountsHarness.operatorPrincipal)
            #expect(nextPage.users.isEmpty)
            let badLimit = try await harness.refusal {
                try await harness.accountsClient.call(AccountsRestrictedUsers.self, .init(limit: 0), principal: AccountsHarness.operatorPrincipal)
            }
            #expect(badLimit.code == .invalidArgument)

            let refused = try await harness.refusal { try await harness.signUp(state: "CA") }
            #expect(refused.code == .restrictedState && refused.message == accountsRestrictedStateMessage)
            let newTexan = try await harness.signUp(state: "TX")
            #expect(newTexan.eligibilityRulesVersion == "2026-06-01")
            #expect(try await harness.get(texan).eligibilityRulesVersion == "2025-12-12")
        }
    }
}

extension AccountsHarness {
    func restrictedUsers() async throws -> AccountsRestrictedUsers.Reply {
        try await accountsClient.call(AccountsRestrictedUsers.self, .init(), principal: Self.operatorPrincipal)
    }
}
