import Foundation

/// A payload that writes and reads its own JSON, bypassing `Codable`'s containers.
///
/// Why: the acceptance path's payloads (its two batch calls, each way) cross the bus once per
/// batch, the gateway writes a user per acceptance, and with every hop already batched,
/// `Codable`'s generic machinery (boxed containers, key look-ups, member sorting) was about a
/// tenth of the CPU of Accounts, Audit and the gateway together
/// (`deploy/benchmarks-history.md`, sixth pass). A hand-written coder appends the members in their sorted
/// order and reads them off the parsed document by their bytes.
///
/// It is an optimisation, never a second dialect: ``appendJSON(to:)`` writes byte for byte what
/// ``FastJSONEncoder`` (and Foundation, `BusJSON.encoder()`) writes for the value, and
/// ``init(json:)`` yields what the `Decodable` conformance yields or throws. Any throw makes
/// ``BusJSON`` redo the whole payload through `Codable`, whose value or error (naming the field)
/// then stands; so a coder only handles the shapes it expects and throws for anything else.
/// Tests compare both ways on every conforming type.
package typealias HandCodedJSON = HandEncodedJSON & HandDecodedJSON

/// The reading half of ``HandCodedJSON``, alone for values that are only ever read (an HTTP
/// request body).
package protocol HandDecodedJSON: Decodable {
    /// Reads the value from a parsed document, or throws to leave it to `Decodable`.
    init(json: JSONInput) throws
}

/// The writing half of ``HandCodedJSON``, alone for values that are only ever written (an HTTP
/// response body).
package protocol HandEncodedJSON: Encodable {
    /// Appends the value's JSON, exactly as its `Encodable` conformance encodes it.
    func appendJSON(to out: inout JSONOutput) throws
}

extension HandEncodedJSON {
    /// Appends `self` to `buffer`, or throws with `buffer` as it was.
    func appendJSON(to buffer: inout [UInt8]) throws(FastJSONFallback) {
        var out = JSONOutput(bytes: [])
        swap(&out.bytes, &buffer)
        let base = out.bytes.count
        do {
            try appendJSON(to: &out)
        } catch {
            out.bytes.removeSubrange(base...)
            swap(&out.bytes, &buffer)
            throw FastJSONFallback()
        }
        swap(&out.bytes, &buffer)
    }
}

extension BusJSON {
    /// `value`'s JSON from its hand-written coder alone, or `nil` where it throws (then `Codable`
    /// would run): for tests and `bus-bench codecs`, which must see the coder itself at work.
    package static func handEncoded<T: HandEncodedJSON>(_ value: T) -> Data? {
        var bytes: [UInt8] = []
        do throws(FastJSONFallback) {
            try value.appendJSON(to: &bytes)
        } catch { return nil }
        return Data(bytes)
    }

    /// `T` read from `data` by its hand-written coder alone, or `nil` where the document does not
    /// parse or the coder throws.
    package static func handDecoded<T: HandDecodedJSON>(_ type: T.Type, from data: Data) -> T? {
        try? FastJSONDecoder.withRoot(of: data) { try T(json: JSONInput(decoder: $0)) }
    }

    /// `value`'s JSON through `Encodable` and the fast encoder, never its hand-written coder.
    package static func encodedWithoutHandCoder<T: Encodable>(_ value: T) throws -> Data {
        var bytes: [UInt8] = []
        try FastJSONEncoder.encodeThroughEncodable(value, appendingTo: &bytes)
        return Data(bytes)
    }

    /// `T` read by `Decodable` through the fast decoder, never by its hand-written coder: the
    /// generic path ``decode(_:from:)`` takes when the coder throws.
    package static func decodedWithoutHandCoder<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try FastJSONDecoder.withRoot(of: data) { try $0.decode(T.self) }
    }
}
