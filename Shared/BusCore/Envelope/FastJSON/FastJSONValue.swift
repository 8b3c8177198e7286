import Foundation

/// Raised inside the fast JSON coders for anything they do not handle exactly as Foundation does
/// (and for every error): the caller then runs Foundation's coder, whose result or error is the
/// one that counts. The fast path is an optimisation, never a second dialect.
struct FastJSONFallback: Error {}

/// One value of a parsed JSON document for ``FastJSONDecoder``. A document is a flat array of
/// these in document order: a container is followed by its contents (an object's members as a
/// key node then the value's nodes), and ``next`` skips past a whole value. Strings and numbers
/// stay byte ranges into the document, decoded only when a `Decodable` asks for them.
///
/// Why flat: the tree of enums and arrays this replaced cost an allocation per container and a
/// retain and release for every value looked at; here a value is an index, and reading a member
/// touches no reference count.
struct FastJSONNode {
    enum Kind: UInt8 { case null, bool, number, string, array, object }
    var kind: Kind
    /// A bool's value; for a string, whether it holds a backslash; for an object, whether every
    /// key is plain ASCII without escapes (then keys are matched on their bytes).
    var flag: Bool
    /// A container's members or items.
    var count = 0
    /// A string's bytes between its quotes, a number's text.
    var start = 0
    var end = 0
    /// The index of the node after this value (and everything inside it).
    var next = 0
}

/// A strict recursive-descent parser over the document's bytes. It accepts exactly the JSON
/// Foundation's decoder accepts for the shapes the fast path handles; anything else throws
/// ``FastJSONFallback``.
struct FastJSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func parseDocument(into nodes: inout [FastJSONNode]) throws(FastJSONFallback) {
        try parseValue(depth: 0, into: &nodes)
        skipWhitespace()
        guard index == bytes.count else { throw FastJSONFallback() }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    private mutating func parseValue(depth: Int, into nodes: inout [FastJSONNode]) throws(FastJSONFallback) {
        guard depth < 128 else { throw FastJSONFallback() }
        skipWhitespace()
        guard index < bytes.count else { throw FastJSONFallback() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth, into: &nodes)
        case UInt8(ascii: "["): return try parseArray(depth: depth, into: &nodes)
        case UInt8(ascii: "\""):
            let node = try parseString(index: nodes.count)
            // Check escapes now: Foundation rejects a bad one even in a member nobody reads.
            if node.flag, !escapesAreValid(node) { throw FastJSONFallback() }
            nodes.append(node)
        case UInt8(ascii: "t"):
            try literal("true")
            nodes.append(FastJSONNode(kind: .bool, flag: true, next: nodes.count + 1))
        case UInt8(ascii: "f"):
            try literal("false")
            nodes.append(FastJSONNode(kind: .bool, flag: false, next: nodes.count + 1))
        case UInt8(ascii: "n"):
            try literal("null")
            nodes.append(FastJSONNode(kind: .null, flag: false, next: nodes.count + 1))
        default:
            let range = try parseNumber()
            nodes.append(FastJSONNode(kind: .number, flag: false, start: range.lowerBound, end: range.upperBound, next: nodes.count + 1))
        }
    }

    private mutating func literal(_ text: StaticString) throws(FastJSONFallback) {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw FastJSONFallback() }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { throw FastJSONFallback() }
        index += count
    }

    private mutating func parseObject(depth: Int, into nodes: inout [FastJSONNode]) throws(FastJSONFallback) {
        index += 1
        let at = nodes.count
        nodes.append(FastJSONNode(kind: .object, flag: true))
        var count = 0
        var plainKeys = true
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw FastJSONFallback() }
                let key = try parseString(index: nodes.count)
                plainKeys = plainKeys && !key.flag && isASCII(key)
                nodes.append(key)
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw FastJSONFallback() }
                index += 1
                try parseValue(depth: depth + 1, into: &nodes)
                count += 1
                skipWhitespace()
                guard index < bytes.count else { throw FastJSONFallback() }
                let next = bytes[index]
                index += 1
                if next == UInt8(ascii: "}") { break }
                guard next == UInt8(ascii: ",") else { throw FastJSONFallback() }
            }
        }
        nodes[at].count = count
        nodes[at].flag = plainKeys
        nodes[at].next = nodes.count
        // Foundation keeps the first of duplicate keys; rare enough to leave to it.
        if count > 1 { try refuseDuplicateKeys(of: at, in: nodes) }
    }

    /// Keys compared as Foundation's dictionary compares them: plain ASCII keys by their bytes,
    /// anything else as `String`s (canonically equivalent keys collide there too).
    private func refuseDuplicateKeys(of object: Int, in nodes: [FastJSONNode]) throws(FastJSONFallback) {
        var keys: [Int] = []
        keys.reserveCapacity(nodes[object].count)
        var member = object + 1
        for _ in 0..<nodes[object].count {
            keys.append(member)
            member = nodes[member + 1].next
        }
        if nodes[object].flag, keys.count <= 32 {
            for i in keys.indices {
                for j in keys.indices where j > i && FastJSONNode.sameBytes(bytes, nodes[keys[i]], nodes[keys[j]]) {
                    throw FastJSONFallback()
                }
            }
            return
        }
        var seen = Set<String>()
        for key in keys {
            guard seen.insert(try FastJSONNode.text(bytes, nodes[key])).inserted else { throw FastJSONFallback() }
        }
    }

    private func isASCII(_ node: FastJSONNode) -> Bool {
        for i in node.start..<node.end where bytes[i] >= 0x80 { return false }
        return true
    }

    private mutating func parseArray(depth: Int, into nodes: inout [FastJSONNode]) throws(FastJSONFallback) {
        index += 1
        let at = nodes.count
        nodes.append(FastJSONNode(kind: .array, flag: false))
        var count = 0
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                try parseValue(depth: depth + 1, into: &nodes)
                count += 1
                skipWhitespace()
                guard index < bytes.count else { throw FastJSONFallback() }
                let next = bytes[index]
                index += 1
                if next == UInt8(ascii: "]") { break }
                guard next == UInt8(ascii: ",") else { throw FastJSONFallback() }
            }
        }
        nodes[at].count = count
        nodes[at].next = nodes.count
    }

    /// Checks a string (no control characters, valid UTF-8); its node, `index` being where it goes.
    private mutating func parseString(index node: Int) throws(FastJSONFallback) -> FastJSONNode {
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
                return FastJSONNode(kind: .string, flag: escaped, start: range.lowerBound, end: range.upperBound, next: node + 1)
            }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index += 2
                continue
            }
            if byte < 0x20 { throw FastJSONFallback() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        throw FastJSONFallback()
    }

    /// Whether every escape of a string is one ``FastJSONNode/text(_:_:)`` reads: checked without
    /// building the string, which is unescaped once, when a `Decodable` asks for it (unescaping
    /// here as well made a 10 KB legal text decode at Foundation's speed, not faster).
    private func escapesAreValid(_ node: FastJSONNode) -> Bool {
        let surrogates: ClosedRange<UInt32> = 0xD800...0xDFFF
        var index = node.start
        while index < node.end {
            guard bytes[index] == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            // The string scan consumed escapes in pairs, so `index + 1` is inside the string.
            switch bytes[index + 1] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 2
            case UInt8(ascii: "u"):
                guard index + 6 <= node.end, let code = JSONScanner.hex4(bytes, at: index + 2) else { return false }
                index += 6
                guard surrogates.contains(code) else { continue }
                // A high surrogate, then `\u` and a low one; a low one alone is no character.
                guard code < 0xDC00, index + 6 <= node.end, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                    let low = JSONScanner.hex4(bytes, at: index + 2), (0xDC00...0xDFFF).contains(low)
                else { return false }
                index += 6
            default: return false
            }
        }
        return true
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

extension FastJSONNode {
    /// The bytes of a string or number.
    func slice(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// Whether two strings have the same bytes.
    static func sameBytes(_ bytes: UnsafeBufferPointer<UInt8>, _ a: FastJSONNode, _ b: FastJSONNode) -> Bool {
        a.end - a.start == b.end - b.start && memcmp(bytes.baseAddress! + a.start, bytes.baseAddress! + b.start, a.end - a.start) == 0
    }

    /// The text of a string value (escapes resolved; UTF-8 was checked by the parser).
    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ node: FastJSONNode) throws(FastJSONFallback) -> String {
        let slice = node.slice(bytes)
        guard node.flag else { return String(decoding: slice, as: UTF8.self) }
        // Escapes are rare in payloads: let the envelope's scanner, which handles them all, do it.
        var quoted = [UInt8](repeating: UInt8(ascii: "\""), count: slice.count + 2)
        quoted.withUnsafeMutableBufferPointer { _ = UnsafeMutableBufferPointer(rebasing: $0[1..<slice.count + 1]).initialize(from: slice) }
        guard let text = try? JSONScanner(bytes: quoted).string(at: 0..<quoted.count) else { throw FastJSONFallback() }
        return text
    }
}
