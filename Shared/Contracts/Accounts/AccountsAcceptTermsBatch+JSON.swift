import BusCore
import Foundation

// `accounts.accept_terms_batch` by hand (``HandCodedJSON``): the gateway's request and Accounts'
// reply, once per batch each way. Members are written in their keys' sorted order; `nil` is left
// out. `BatchPayloadJSONTests` checks every coder against the `Codable` conformance.

extension AccountsAcceptTermsBatch.Request: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) throws {
        out.beginObject()
        try KeyedItemsJSON.append(items, body: "request", { ($0.idempotencyKey, $0.request) }, to: &out)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var items: [AccountsAcceptTermsBatch.Item]?
        try json.members { key, member in
            guard key == "items" else { return }
            items = try KeyedItemsJSON.read(member, body: "request") { AccountsAcceptTermsBatch.Item(request: $0, idempotencyKey: $1) }
        }
        guard let items else { throw JSONInput.Mismatch() }
        self.init(items: items)
    }
}

/// Also the request of `accounts.accept_terms` and `decline_terms` on their own.
extension AccountsTermsRequest: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.member("clientIP", clientIP)
        out.member("tosVersion", tosVersion)
        out.member("userAgent", userAgent)
        out.member("userId", userId)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var userId: UUID?
        var tosVersion: String?
        var clientIP: String?
        var userAgent: String?
        try json.members { key, value in
            if key == "userId" {
                userId = try value.uuid()
            } else if key == "tosVersion" {
                tosVersion = try value.string()
            } else if key == "clientIP" {
                clientIP = try value.optionalString()
            } else if key == "userAgent" {
                userAgent = try value.optionalString()
            }
        }
        guard let userId, let tosVersion else { throw JSONInput.Mismatch() }
        self.init(userId: userId, tosVersion: tosVersion, clientIP: clientIP, userAgent: userAgent)
    }
}

extension AccountsAcceptTermsBatch.Reply: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) throws {
        try ItemOutcome.appendOutcomes(outcomes, to: &out)
    }

    package init(json: JSONInput) throws {
        self.init(outcomes: try ItemOutcome.outcomes(json: json))
    }
}

extension AccountUser: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) throws {
        out.beginObject()
        out.member("appleId", appleId)
        out.member("createdAt", createdAt)
        out.member("eligibilityConfirmedAt", eligibilityConfirmedAt)
        out.member("eligibilityRulesVersion", eligibilityRulesVersion)
        out.member("email", email)
        out.member("hasAcceptedTOS", hasAcceptedTOS)
        out.member("hasConfirmedEligibility", hasConfirmedEligibility)
        out.member("id", id)
        out.member("name", name)
        out.member("needsToAcceptTOS", needsToAcceptTOS)
        out.member("state", state)
        out.member("tosAcceptedAt", tosAcceptedAt)
        out.member("tosVersion", tosVersion)
        out.member("username", username)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var id: UUID?
        var appleId: String?
        var email: String?
        var name: String?
        var username: String?
        var state: String?
        var eligibilityConfirmedAt: Date?
        var tosVersion: String?
        var tosAcceptedAt: Date?
        var createdAt: Date?
        var eligibilityRulesVersion: String?
        var hasConfirmedEligibility: Bool?
        var hasAcceptedTOS: Bool?
        var needsToAcceptTOS: Bool?
        try json.members { key, value in
            if key == "id" {
                id = try value.optionalUUID()
            } else if key == "appleId" {
                appleId = try value.string()
            } else if key == "email" {
                email = try value.optionalString()
            } else if key == "name" {
                name = try value.optionalString()
            } else if key == "username" {
                username = try value.optionalString()
            } else if key == "state" {
                state = try value.optionalString()
            } else if key == "eligibilityConfirmedAt" {
                eligibilityConfirmedAt = try value.optionalDate()
            } else if key == "tosVersion" {
                tosVersion = try value.optionalString()
            } else if key == "tosAcceptedAt" {
                tosAcceptedAt = try value.optionalDate()
            } else if key == "createdAt" {
                createdAt = try value.optionalDate()
            } else if key == "eligibilityRulesVersion" {
                eligibilityRulesVersion = try value.optionalString()
            } else if key == "hasConfirmedEligibility" {
                hasConfirmedEligibility = try value.bool()
            } else if key == "hasAcceptedTOS" {
                hasAcceptedTOS = try value.bool()
            } else if key == "needsToAcceptTOS" {
                needsToAcceptTOS = try value.bool()
            }
        }
        guard let appleId, let hasConfirmedEligibility, let hasAcceptedTOS, let needsToAcceptTOS else {
            throw JSONInput.Mismatch()
        }
        self.init(
            id: id, appleId: appleId, email: email, name: name, username: username, state: state,
            eligibilityConfirmedAt: eligibilityConfirmedAt, tosVersion: tosVersion, tosAcceptedAt: tosAcceptedAt,
            createdAt: createdAt, eligibilityRulesVersion: eligibilityRulesVersion,
            hasConfirmedEligibility: hasConfirmedEligibility, hasAcceptedTOS: hasAcceptedTOS, needsToAcceptTOS: needsToAcceptTOS)
    }
}
