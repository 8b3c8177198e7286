import BusCore
import Foundation
import Testing

/// ``BusJSON/describe(_:)``: the one wording of an undecodable payload on the bus and of an
/// undecodable request body at the gateway, naming the field by its dotted path.
@Suite struct DecodingErrorDescriptionTests {
    struct Item: Codable { var userId: UUID }
    struct Batch: Codable {
        var version: String
        var items: [Item]
    }

    func description(of json: String) -> String? {
        do {
            _ = try BusJSON.decode(Batch.self, from: Data(json.utf8))
            return nil
        } catch {
            return BusJSON.describe(error)
        }
    }

    @Test("a missing field is named by its full path, at the top level and nested")
    func missingField() {
        #expect(description(of: #"{"items": []}"#) == "missing field version")
        #expect(description(of: #"{"version": "1", "items": [{}]}"#) == "missing field items.0.userId")
    }

    @Test("a value of the wrong type or shape names the type expected and where")
    func wrongValue() {
        #expect(description(of: #"{"version": 1, "items": []}"#) == "expected String at version")
        #expect(description(of: #"{"version": null, "items": []}"#) == "missing String value at version")
        let badUUID = description(of: #"{"version": "1", "items": [{"userId": "nope"}]}"#) ?? ""
        #expect(badUUID.hasSuffix(" at items.0.userId"), "\(badUUID)")
    }

    @Test("text that is not JSON says so; an error that is not a DecodingError is described as itself")
    func notJSON() {
        #expect(description(of: "{")?.contains("not valid JSON") == true, "\(description(of: "{") ?? "")")
        #expect(BusJSON.describe(BusError(.internal, "boom")) == "internal: boom")
    }
}
