import Foundation
import ServiceKit

/// The Accounts service's own settings.
public struct AccountsSettings: EnvironmentSettings {
    /// The eligibility rules in force (the shipped file unless `ACCOUNTS_ELIGIBILITY_RULES` names one).
    public let rules: EligibilityRules
    /// How often deleted accounts whose Audit erasure failed are tried again.
    public let erasureSweepInterval: Duration

    public init(environment env: EnvironmentReader) throws {
        let path = env.string(
            "ACCOUNTS_ELIGIBILITY_RULES", default: "",
            "Path of a JSON eligibility rules file (version, minimumAge, jurisdictions, restrictedStates); empty: the shipped rules.")
        erasureSweepInterval = try env.duration(
            "ACCOUNTS_ERASURE_SWEEP_INTERVAL", default: .seconds(30),
            "How often deleted accounts whose Audit erasure has not succeeded yet are tried again.")
        rules = path.isEmpty ? try EligibilityRules.bundled() : try EligibilityRules.load(from: URL(fileURLWithPath: path))
    }
}
