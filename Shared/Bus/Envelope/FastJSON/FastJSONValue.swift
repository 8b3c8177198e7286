import Foundation

/// Raised inside the fast JSON coders for anything they do not handle exactly as Foundation does
/// (and for every error): the caller then runs Foundation's coder, whose result or error is the
/// one that counts. The fast path is an optimisation, never a second dialect.
struct FastJSONFallback: Error {}

/// A parsed JSON document for ``FastJSONDecoder``: object keys are decoded, string values are
/// kept as byte ranges into the document and decoded only when a `Decodable` asks for them.
enum FastJSONValue {
    case null
    case bool(Bool)
    /// The number's text, grammar already checked (RFC 8259 §6).
    case number(Range<Int>)
    /// The bytes between the quotes; `escaped` when they hold a backslash.
    case string(Range<Int>, escaped: Bool)
    case array([FastJSONValue])
    /// Members in document order, keys unique (documents with duplicate keys fall back).
    case object([FastJSONMember])
}

/// One member of a parsed object.
struct FastJSONMember {
    var key: String
    var value: FastJSONValue
}

/// A strict recursive-descent parser over the document's bytes. It accepts exactly the JSON
/// Foundation's decoder accepts for the shapes the fast path handles; anything else throws
/// ``FastJSONFallback``.
struct FastJSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func parseDocument() throws(FastJSONFallback) -> FastJSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw FastJSONFallback() }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    private mutating func parseValue(depth: Int) throws(FastJSONFallback) -> FastJSONValue {
        guard depth < 128 else { throw FastJSONFallback() }
        skipWhitespace()
        guard index < bytes.count else { throw FastJSONFallback() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""):
            let (range, escaped) = try parseString()
            // Check escapes now: Foundation rejects a bad one even in a member nobody reads.
            if escaped { _ = try FastJSONValue.text(bytes, range, escaped: true) }
            return .string(range, escaped: escaped)
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try parseNumber())
        }
    }

    private mutating func literal(_ text: StaticString) throws(FastJSONFallback) {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw FastJSONFallback() }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { throw FastJSONFallback() }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(FastJSONFallback) -> FastJSONValue {
        index += 1
        var members: [FastJSONMember] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw FastJSONFallback() }
            let (range, escaped) = try parseString()
            let key = try FastJSONValue.text(bytes, range, escaped: escaped)
            // Foundation keeps the first of duplicate keys; rare enough to leave to it.
            for member in members where member.key == key { throw FastJSONFallback() }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw FastJSONFallback() }
            index += 1
            members.append(FastJSONMember(key: key, value: try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard index < bytes.count else { throw FastJSONFallback() }
            let next = bytes[index]
            index += 1
            if next == UInt8(ascii: "}") { return .object(members) }
            guard next == UInt8(ascii: ",") else { throw FastJSONFallback() }
        }
    }

    private mutating func parseArray(depth: Int) throws(FastJSONFallback) -> FastJSONValue {
        index += 1
        var items: [FastJSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw FastJSONFallback() }
            let next = bytes[index]
            index += 1
            if next == UInt8(ascii: "]") { return .array(items) }
            guard next == UInt8(ascii: ",") else { throw FastJSONFallback() }
        }
    }

    /// Checks a string (no control characters, valid UTF-8) and returns the range inside its quotes.
    private mutating func parseString() throws(FastJSONFallback) -> (Range<Int>, Bool) {
        index += 1
        let start = index
        var escaped = false
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let range = start..<index
                index += 1
                if !ascii, String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) == nil {
                    throw FastJSONFallback()
                }
                return (range, escaped)
            }
            if byte == UInt8(ascii: "\\") { escaped = true; index += 2; continue }
            if byte < 0x20 { throw FastJSONFallback() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        throw FastJSONFallback()
    }

    private mutating func parseNumber() throws(FastJSONFallback) -> Range<Int> {
        let start = index
        func digit(_ i: Int) -> Bool { i < bytes.count && bytes[i] &- UInt8(ascii: "0") < 10 }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard digit(index) else { throw FastJSONFallback() }
        if bytes[index] == UInt8(ascii: "0") { index += 1 } else { while digit(index) { index += 1 } }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digit(index) else { throw FastJSONFallback() }
            while digit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digit(index) else { throw FastJSONFallback() }
            while digit(index) { index += 1 }
        }
        return start..<index
    }
}

extension FastJSONValue {
    /// The text of a string value (escapes resolved; UTF-8 was checked by the parser).
    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, escaped: Bool) throws(FastJSONFallback) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        guard escaped else { return String(decoding: slice, as: UTF8.self) }
        // Escapes are rare in payloads: let the envelope's scanner, which handles them all, do it.
        var quoted = [UInt8](repeating: UInt8(ascii: "\""), count: slice.count + 2)
        quoted.withUnsafeMutableBufferPointer { _ = UnsafeMutableBufferPointer(rebasing: $0[1..<slice.count + 1]).initialize(from: slice) }
        guard let text = try? JSONScanner(bytes: quoted).string(at: 0..<quoted.count) else { throw FastJSONFallback() }
        return text
    }
}
