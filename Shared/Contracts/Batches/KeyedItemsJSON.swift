import BusCore

/// The `items` of both batch calls' requests, by hand (``HandCodedJSON``): each item is
/// `{"idempotencyKey":…,"<name>":{…}}`, its own request under `name` (`request`, `record`), which
/// sorts after `idempotencyKey` in both.
enum KeyedItemsJSON {
    /// Appends the `items` member: its key, then the array.
    static func append<Item, Body: HandCodedJSON>(
        _ items: [Item], body name: StaticString, _ parts: (Item) -> (idempotencyKey: String, body: Body), to out: inout JSONOutput
    ) throws {
        out.key("items")
        out.beginArray()
        for item in items {
            let (idempotencyKey, body) = parts(item)
            out.item()
            out.beginObject()
            out.member("idempotencyKey", idempotencyKey)
            out.key(name)
            try body.appendJSON(to: &out)
            out.endObject()
        }
        out.endArray()
    }

    /// Reads the `items` array; an item without its key or request leaves the payload to `Decodable`.
    static func read<Item, Body: HandCodedJSON>(
        _ array: JSONInput, body name: StaticString, _ make: (Body, String) -> Item
    ) throws -> [Item] {
        var items: [Item] = []
        items.reserveCapacity(array.count)
        try array.items { item in
            var body: Body?
            var idempotencyKey: String?
            try item.members { key, value in
                if key == name {
                    body = try Body(json: value)
                } else if key == "idempotencyKey" {
                    idempotencyKey = try value.string()
                }
            }
            guard let body, let idempotencyKey else { throw JSONInput.Mismatch() }
            items.append(make(body, idempotencyKey))
        }
        return items
    }
}
