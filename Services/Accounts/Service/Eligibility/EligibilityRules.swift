import Foundation

/// Who may open an account: the jurisdictions (the 50 states and DC), those of them where
/// contests are not offered, and the minimum age the user certifies. Versioned configuration,
/// not code: the shipped file is `Rules/eligibility_rules.json`; `ACCOUNTS_ELIGIBILITY_RULES`
/// names another. Each user keeps the version they were admitted under, so when the list
/// changes an operator can find who is now restricted (`accounts.restricted_users`).
public struct EligibilityRules: Codable, Sendable, Equatable {
    public var version: String
    /// The age the user certifies being at least (part of `eligibility_certified`).
    public var minimumAge: Int
    /// Two-letter codes a user may give as their state.
    public var jurisdictions: [String]
    /// Jurisdictions where contests are not available: sign-up is refused (`restricted_state`).
    public var restrictedStates: [String]

    public init(version: String, minimumAge: Int, jurisdictions: [String], restrictedStates: [String]) {
        self.version = version
        self.minimumAge = minimumAge
        self.jurisdictions = jurisdictions
        self.restrictedStates = restrictedStates
    }

    /// What a state string means under these rules (trimmed, case-insensitive).
    public enum Verdict: Equatable, Sendable {
        case allowed(String)
        case restricted(String)
        case unknown
    }

    public func judge(_ state: String) -> Verdict {
        let code = state.trimmingCharacters(in: .whitespaces).uppercased()
        guard jurisdictions.contains(code) else { return .unknown }
        return restrictedStates.contains(code) ? .restricted(code) : .allowed(code)
    }

    /// Checks the file makes sense: a version, an age, two-letter codes, restricted ⊆ jurisdictions.
    public func validated() throws -> EligibilityRules {
        let isCode = { (code: String) in code.count == 2 && code.allSatisfy { ("A"..."Z").contains($0) } }
        guard !version.isEmpty, version.utf8.count <= 64 else { throw RulesError("version must be 1 to 64 bytes") }
        guard (1...120).contains(minimumAge) else { throw RulesError("minimumAge must be between 1 and 120") }
        guard !jurisdictions.isEmpty, jurisdictions.allSatisfy(isCode) else {
            throw RulesError("jurisdictions must be non-empty two-letter upper-case codes")
        }
        guard restrictedStates.allSatisfy(jurisdictions.contains) else {
            throw RulesError("every restricted state must be a jurisdiction")
        }
        return self
    }

    /// Reads and validates a rules file.
    public static func load(from url: URL) throws -> EligibilityRules {
        let data = try Data(contentsOf: url)
        do { return try JSONDecoder().decode(EligibilityRules.self, from: data).validated() } catch let error as RulesError {
            throw RulesError("\(url.path): \(error.message)")
        } catch { throw RulesError("\(url.path): \(error)") }
    }

    /// The rules shipped with the service.
    public static func bundled() throws -> EligibilityRules {
        guard let folder = Bundle.module.url(forResource: "Rules", withExtension: nil) else {
            throw RulesError("Rules is missing from the AccountsService resource bundle")
        }
        return try load(from: folder.appendingPathComponent("eligibility_rules.json"))
    }
}

/// A rules file that cannot be used: the service refuses to start rather than guess.
public struct RulesError: Error, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "eligibility rules: \(message)" }
}
