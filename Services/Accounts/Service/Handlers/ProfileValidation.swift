import Bus
import Contracts
import Foundation

/// Input rules of `accounts.correct_profile`, applied before anything is read or written: a name
/// of 1 to 200 bytes without control characters, an email address (one `@` between a local part
/// and a dotted domain, no spaces, at most 320 bytes), a state the eligibility rules in force
/// allow. Names and emails are trimmed of surrounding white space.
enum ProfileValidation {
    static func check(_ request: AccountsCorrectProfile.Request, rules: EligibilityRules) throws -> ProfileChange {
        guard request.name != nil || request.email != nil || request.state != nil else {
            throw BusError(.invalidArgument, "give at least one of name, email or state")
        }
        try ConsentClientRule.check(clientIP: request.clientIP, userAgent: request.userAgent)
        var change = ProfileChange(clientIP: request.clientIP, userAgent: request.userAgent)
        if let raw = request.name {
            let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.utf8.count <= 200 else {
                throw BusError(.invalidArgument, "name must be 1 to 200 bytes", details: ["field": "name"])
            }
            guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw BusError(.invalidArgument, "name must not contain control characters", details: ["field": "name"])
            }
            change.name = name
        }
        if let raw = request.email {
            let email = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard isEmail(email) else { throw BusError(.invalidArgument, "email is not an email address", details: ["field": "email"]) }
            change.email = email
        }
        if let raw = request.state {
            let code = try SignUpValidation.checkState(raw, rules: rules)
            change.state = .init(code: code, rulesVersion: rules.version, minimumAge: rules.minimumAge)
        }
        return change
    }

    /// Only what differs from `user`: a field given with the value it already has is no change.
    static func changes(_ checked: ProfileChange, from user: StoredUser) -> ProfileChange {
        var change = checked
        if change.name == user.name { change.name = nil }
        if change.email == user.email { change.email = nil }
        if change.state?.code == user.state { change.state = nil }
        return change
    }

    /// `local@domain.tld`: one `@`, a non-empty local part, a domain of at least two non-empty
    /// labels, no white space or control characters, at most 320 bytes.
    static func isEmail(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 320 else { return false }
        guard !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) else {
            return false
        }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && $0.utf8.count <= 63 }
    }
}
