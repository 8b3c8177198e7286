import BusCore

/// A batch item's outcome for its batch's ``HandCodedJSON``: `{"error":…}` or `{"value":…}`, as the
/// synthesized `Codable` writes it (members sorted, the absent one left out). The value is written
/// by hand; an error, rare on the hot path, goes through its `Codable` conformance.
extension ItemOutcome where Value: HandCodedJSON {
    func appendJSON(to out: inout JSONOutput) throws {
        out.beginObject()
        if let error {
            out.key("error")
            try out.encoded(error)
        }
        if let value {
            out.key("value")
            try value.appendJSON(to: &out)
        }
        out.endObject()
    }

    init(json: JSONInput) throws {
        var value: Value?
        var error: BusError?
        try json.members { key, member in
            if key == "error" {
                error = member.isNull ? nil : try member.decoded(BusError.self)
            } else if key == "value" {
                value = member.isNull ? nil : try Value(json: member)
            }
        }
        self.value = value
        self.error = error
    }

    /// The outcomes of a batch's reply (`{"outcomes":[…]}`).
    static func appendOutcomes(_ outcomes: [Self], to out: inout JSONOutput) throws {
        out.beginObject()
        out.key("outcomes")
        out.beginArray()
        for outcome in outcomes {
            out.item()
            try outcome.appendJSON(to: &out)
        }
        out.endArray()
        out.endObject()
    }

    static func outcomes(json: JSONInput) throws -> [Self] {
        var outcomes: [Self]?
        try json.members { key, member in
            guard key == "outcomes" else { return }
            var list: [Self] = []
            list.reserveCapacity(member.count)
            try member.items { list.append(try Self(json: $0)) }
            outcomes = list
        }
        guard let outcomes else { throw JSONInput.Mismatch() }
        return outcomes
    }
}
