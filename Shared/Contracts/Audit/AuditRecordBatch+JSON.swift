import BusCore
import Foundation

// `audit.record_batch` by hand (``HandCodedJSON``): Accounts' request and Audit's reply, once per
// batch each way. Members are written in their keys' sorted order; `nil` is left out.
// `BatchPayloadJSONTests` checks every coder against the `Codable` conformance.

extension AuditRecordBatch.Request: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) throws {
        out.beginObject()
        try KeyedItemsJSON.append(items, body: "record", { ($0.idempotencyKey, $0.record) }, to: &out)
        out.member("signReceipts", signReceipts)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var items: [AuditRecordBatch.Item]?
        var signReceipts: Bool?
        try json.members { key, member in
            if key == "signReceipts" {
                signReceipts = try member.bool()
            } else if key == "items" {
                items = try KeyedItemsJSON.read(member, body: "record") { AuditRecordBatch.Item(record: $0, idempotencyKey: $1) }
            }
        }
        guard let items, let signReceipts else { throw JSONInput.Mismatch() }
        self.init(items: items, signReceipts: signReceipts)
    }
}

/// Also `audit.record`'s request on its own (what `compass load` sends).
extension AuditRecord.Request: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.member("action", action.rawValue)
        out.member("clientIP", clientIP)
        out.member("documentType", documentType.rawValue)
        out.member("userAgent", userAgent)
        out.member("userId", userId)
        out.member("version", version)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var userId: UUID?
        var documentType: LegalDocumentType?
        var version: String?
        var action: AcceptanceAction?
        var clientIP: String?
        var userAgent: String?
        try json.members { key, value in
            if key == "userId" {
                userId = try value.uuid()
            } else if key == "documentType" {
                documentType = try value.rawValue(LegalDocumentType.self)
            } else if key == "version" {
                version = try value.string()
            } else if key == "action" {
                action = try value.rawValue(AcceptanceAction.self)
            } else if key == "clientIP" {
                clientIP = try value.optionalString()
            } else if key == "userAgent" {
                userAgent = try value.optionalString()
            }
        }
        guard let userId, let documentType, let version, let action else { throw JSONInput.Mismatch() }
        self.init(userId: userId, documentType: documentType, version: version, action: action, clientIP: clientIP, userAgent: userAgent)
    }
}

extension AuditRecordBatch.Reply: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) throws {
        try ItemOutcome.appendOutcomes(outcomes, to: &out)
    }

    package init(json: JSONInput) throws {
        self.init(outcomes: try ItemOutcome.outcomes(json: json))
    }
}

extension ConsentReceipt: HandCodedJSON {
    package func appendJSON(to out: inout JSONOutput) throws {
        out.beginObject()
        out.member("action", action.rawValue)
        out.member("chain", Int64(chain))
        out.member("digest", digest)
        out.member("documentType", documentType.rawValue)
        out.member("hash", hash)
        out.member("position", position)
        if let proof {
            out.key("proof")
            out.beginObject()
            out.member("index", Int64(proof.index))
            out.key("path")
            out.beginArray()
            for hash in proof.path {
                out.item()
                out.string(hash)
            }
            out.endArray()
            out.member("size", Int64(proof.size))
            out.endObject()
        }
        out.member("recordId", recordId)
        out.member("recordedAt", recordedAt)
        out.member("signature", signature)
        out.member("version", version)
        out.endObject()
    }

    package init(json: JSONInput) throws {
        var recordId: UUID?
        var documentType: LegalDocumentType?
        var version: String?
        var digest: String?
        var action: AcceptanceAction?
        var recordedAt: Date?
        var chain: Int?
        var position: Int64?
        var hash: String?
        var signature: String?
        var proof: ReceiptProof?
        try json.members { key, value in
            if key == "recordId" {
                recordId = try value.uuid()
            } else if key == "documentType" {
                documentType = try value.rawValue(LegalDocumentType.self)
            } else if key == "version" {
                version = try value.string()
            } else if key == "digest" {
                digest = try value.string()
            } else if key == "action" {
                action = try value.rawValue(AcceptanceAction.self)
            } else if key == "recordedAt" {
                recordedAt = try value.date()
            } else if key == "chain" {
                chain = try value.int()
            } else if key == "position" {
                position = try value.int64()
            } else if key == "hash" {
                hash = try value.string()
            } else if key == "signature" {
                signature = try value.string()
            } else if key == "proof" {
                proof = value.isNull ? nil : try ReceiptProof(json: value)
            }
        }
        guard let recordId, let documentType, let version, let digest, let action, let recordedAt, let chain, let position,
            let hash, let signature
        else { throw JSONInput.Mismatch() }
        self.init(
            recordId: recordId, documentType: documentType, version: version, digest: digest, action: action,
            recordedAt: recordedAt, chain: chain, position: position, hash: hash, signature: signature, proof: proof)
    }
}

extension ReceiptProof {
    init(json: JSONInput) throws {
        var index: Int?
        var size: Int?
        var path: [String]?
        try json.members { key, value in
            if key == "index" {
                index = try value.int()
            } else if key == "size" {
                size = try value.int()
            } else if key == "path" {
                var hashes: [String] = []
                hashes.reserveCapacity(value.count)
                try value.items { hashes.append(try $0.string()) }
                path = hashes
            }
        }
        guard let index, let size, let path else { throw JSONInput.Mismatch() }
        self.init(index: index, size: size, path: path)
    }
}
