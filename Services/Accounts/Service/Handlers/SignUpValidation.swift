import Bus
import Contracts
import Foundation

/// Input rules of the `accounts.*` requests, refused before anything is read or written.
enum SignUpValidation {
    static func checkIdentity(_ request: AccountsGetOrCreate.Request) throws {
        guard !request.appleId.isEmpty, request.appleId.utf8.count <= 255 else {
            throw BusError(.invalidArgument, "appleId must be 1 to 255 bytes")
        }
        if let email = request.email, email.utf8.count > 320 { throw BusError(.invalidArgument, "email is longer than 320 bytes") }
        if let name = request.name, name.utf8.count > 200 { throw BusError(.invalidArgument, "name is longer than 200 bytes") }
        if let version = request.tosVersion { try LegalVersionRule.check(version, field: "tosVersion") }
        // Checked as Audit will check it: a sign-up Audit would refuse is refused before the user is stored.
        try ConsentClientRule.check(clientIP: request.clientIP, userAgent: request.userAgent)
    }

    /// The state under `rules`: its code when allowed; `restricted_state` with the seed's exact
    /// message, or `invalid_argument` for anything that is not a US state or DC.
    static func checkState(_ state: String, rules: EligibilityRules) throws -> String {
        switch rules.judge(state) {
        case .allowed(let code): return code
        case .restricted(let code):
            throw BusError(.restrictedState, accountsRestrictedStateMessage, details: ["state": code, "rulesVersion": rules.version])
        case .unknown:
            throw BusError(.invalidArgument, "state must be the two-letter code of a US state or DC")
        }
    }

    /// `conflict` naming the version in effect, so the client can fetch and show it.
    static func staleTerms(_ given: String?, current: String) -> BusError {
        BusError(
            .conflict,
            "terms of service version \(given ?? "(none)") is not the version in effect (\(current)): read the terms in effect (GET /api/terms) and accept that version",
            details: ["currentVersion": current])
    }
}
