import BusCore
import Foundation

// `accounts.consents_since`'s reply by hand (``HandCodedJSON``): Accounts writes it and Audit
// reads it once per page of the consent stream, every act of the acceptance path with its IP
// address and user agent. Through `Codable` its reading was about a tenth of Audit's CPU in
// `deploy/bench-gateway` (2026-11-28). Members are written in their keys' sorted order; `nil` is
// left out. `BatchPayloadJSONTests` checks every coder against the `Codable` conformance.

extension AccountsConsentsSince.Reply: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) throws {
        out.beginObject()
        out.key("entries")
        out.beginArray()
        for entry in entries {
            out.item()
            entry.appendJSON(to: &out)
        }
        out.endArray()
        if let latest {
            out.key("latest")
            latest.appendJSON(to: &out)
        }
        out.member("remaining", Int64(remaining))
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var entries: [AccountsConsentsSince.Entry]?
        var latest: ConsentStreamPosition?
        var remaining: Int?
        try json.members { key, value in
            if key == "entries" {
                var read: [AccountsConsentsSince.Entry] = []
                read.reserveCapacity(value.count)
                try value.items { read.append(try AccountsConsentsSince.Entry(json: $0)) }
                entries = read
            } else if key == "latest" {
                latest = value.isNull ? nil : try ConsentStreamPosition(json: value)
            } else if key == "remaining" {
                remaining = try value.int()
            }
        }
        guard let entries, let remaining else { throw JSONInput.Mismatch() }
        self.init(entries: entries, latest: latest, remaining: remaining)
    }
}

extension AccountsConsentsSince.Entry: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.member("action", action?.rawValue)
        out.member("clientIP", clientIP)
        out.member("documentType", documentType?.rawValue)
        out.member("idempotencyKey", idempotencyKey)
        out.member("kind", kind.rawValue)
        out.key("position")
        position.appendJSON(to: &out)
        out.member("recordId", recordId)
        out.member("recordedMilliseconds", recordedMilliseconds)
        out.member("userAgent", userAgent)
        out.member("userId", userId)
        out.member("version", version)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var position: ConsentStreamPosition?
        var kind: Kind?
        var userId: UUID?
        var recordId: UUID?
        var documentType: LegalDocumentType?
        var version: String?
        var action: AcceptanceAction?
        var idempotencyKey: String?
        var recordedMilliseconds: Int64?
        var clientIP: String?
        var userAgent: String?
        try json.members { key, value in
            if key == "position" {
                position = try ConsentStreamPosition(json: value)
            } else if key == "kind" {
                kind = try value.rawValue(Kind.self)
            } else if key == "userId" {
                userId = try value.uuid()
            } else if key == "recordId" {
                recordId = try value.optionalUUID()
            } else if key == "documentType" {
                documentType = try value.optionalRawValue(LegalDocumentType.self)
            } else if key == "version" {
                version = try value.optionalString()
            } else if key == "action" {
                action = try value.optionalRawValue(AcceptanceAction.self)
            } else if key == "idempotencyKey" {
                idempotencyKey = try value.optionalString()
            } else if key == "recordedMilliseconds" {
                recordedMilliseconds = try value.int64()
            } else if key == "clientIP" {
                clientIP = try value.optionalString()
            } else if key == "userAgent" {
                userAgent = try value.optionalString()
            }
        }
        guard let position, let kind, let userId, let recordedMilliseconds else { throw JSONInput.Mismatch() }
        self.init(
            position: position, kind: kind, userId: userId, recordId: recordId, documentType: documentType, version: version,
            action: action, idempotencyKey: idempotencyKey, recordedMilliseconds: recordedMilliseconds, clientIP: clientIP,
            userAgent: userAgent)
    }
}

extension ConsentStreamPosition: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.member("entry", entry)
        out.member("transaction", transaction)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var transaction: Int64?
        var entry: Int64?
        try json.members { key, value in
            if key == "transaction" {
                transaction = try value.int64()
            } else if key == "entry" {
                entry = try value.int64()
            }
        }
        guard let transaction, let entry else { throw JSONInput.Mismatch() }
        self.init(transaction: transaction, entry: entry)
    }
}
