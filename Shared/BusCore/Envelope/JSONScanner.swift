import Foundation

/// A minimal JSON reader for the envelope header: it finds the top-level members of an object and
/// the byte range of each value, and decodes the scalar ones. The payload's range is handed to
/// `JSONDecoder` untouched, so it is parsed once, by the handler that knows its type.
struct JSONScanner {
    struct Malformed: Error, Sendable, CustomStringConvertible {
        var reason: String
        var offset: Int
        var description: String { "malformed JSON at byte \(offset): \(reason)" }
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ data: Data) { bytes = [UInt8](data) }
    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The members of the top-level object: key and value range, in order.
    mutating func topLevelMembers() throws(Malformed) -> [(key: String, value: Range<Int>)] {
        var members: [(key: String, value: Range<Int>)] = []
        for member in try topLevelMemberRanges() {
            members.append((try string(at: member.key) ?? "", member.value))
        }
        return members
    }

    /// The members of the top-level object as byte ranges (the key's range includes its quotes),
    /// in order. The envelope decoder matches keys on these bytes without building strings.
    mutating func topLevelMemberRanges() throws(Malformed) -> [(key: Range<Int>, value: Range<Int>)] {
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        var members: [(key: Range<Int>, value: Range<Int>)] = []
        members.reserveCapacity(16)
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return try finish(members)
        }
        while true {
            skipWhitespace()
            let keyStart = index
            try skipString()
            let key = keyStart..<index
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            let start = index
            try skipValue(depth: 0)
            members.append((key, start..<index))
            skipWhitespace()
            guard let next = peek() else { throw Malformed(reason: "unterminated object", offset: index) }
            index += 1
            if next == UInt8(ascii: "}") { return try finish(members) }
            guard next == UInt8(ascii: ",") else { throw Malformed(reason: "expected , or }", offset: index - 1) }
        }
    }

    private mutating func finish<T>(_ members: [T]) throws(Malformed) -> [T] {
        skipWhitespace()
        guard index == bytes.count else { throw Malformed(reason: "trailing bytes", offset: index) }
        return members
    }

    /// Whether the JSON string at `range` (a key, quotes included) is exactly `name`. Keys with
    /// escapes (legal, never sent by our writer) are decoded first.
    func stringEquals(_ range: Range<Int>, _ name: [UInt8]) throws(Malformed) -> Bool {
        if let inner = unquoted(range) { return inner.elementsEqual(name) }
        return try string(at: range).map { $0.utf8.elementsEqual(name) } ?? false
    }

    /// Decodes the string at `range` (which must hold exactly one JSON string), or `nil` for `null`.
    func string(at range: Range<Int>) throws(Malformed) -> String? {
        if isNull(range) { return nil }
        var scanner = self
        scanner.index = range.lowerBound
        return try scanner.readString()
    }

    /// The bytes between the quotes of the string at `range`, when it has no escapes.
    func unquoted(_ range: Range<Int>) -> ArraySlice<UInt8>? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\""),
            bytes[range.upperBound - 1] == UInt8(ascii: "\"")
        else { return nil }
        let inner = bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]
        return inner.contains(UInt8(ascii: "\\")) ? nil : inner
    }

    /// The integer at `range` (no fraction or exponent), or `nil` for `null`; read from the bytes.
    func integer(at range: Range<Int>) throws(Malformed) -> Int64? {
        if isNull(range) { return nil }
        var index = range.lowerBound
        let negative = index < range.upperBound && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let bad = Malformed(reason: "expected an integer", offset: range.lowerBound)
        guard index < range.upperBound else { throw bad }
        // Accumulate negatively so Int64.min still fits.
        var value: Int64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw bad }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { throw bad }
            value = next
            index += 1
        }
        if negative { return value }
        guard value != .min else { throw bad }
        return -value
    }

    func slice(_ range: Range<Int>) -> Data { Data(bytes[range]) }
    func isNull(_ range: Range<Int>) -> Bool { bytes[range].elementsEqual("null".utf8) }

    // MARK: Scanning

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func expect(_ byte: UInt8) throws(Malformed) {
        guard peek() == byte else {
            throw Malformed(reason: "expected '\(Character(Unicode.Scalar(byte)))'", offset: index)
        }
        index += 1
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func skipValue(depth: Int) throws(Malformed) {
        guard depth < 64 else { throw Malformed(reason: "nested too deeply", offset: index) }
        guard let byte = peek() else { throw Malformed(reason: "expected a value", offset: index) }
        switch byte {
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            index += 1
            skipWhitespace()
            if peek() == close {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                if close == UInt8(ascii: "}") {
                    try skipString()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard let next = peek() else { throw Malformed(reason: "unterminated container", offset: index) }
                index += 1
                if next == close { return }
                guard next == UInt8(ascii: ",") else { throw Malformed(reason: "expected ,", offset: index - 1) }
            }
        case UInt8(ascii: "t"): try skipLiteral("true")
        case UInt8(ascii: "f"): try skipLiteral("false")
        case UInt8(ascii: "n"): try skipLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try skipNumber()
        default: throw Malformed(reason: "unexpected byte", offset: index)
        }
    }

    /// Skips a string without building it: values inside the payload are read by the payload's
    /// own decoder, which also validates them; building them here would only be thrown away.
    private mutating func skipString() throws(Malformed) {
        let start = index
        try expect(UInt8(ascii: "\""))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return }
            if byte == UInt8(ascii: "\\") {
                index += 1
            } else if byte < 0x20 {
                throw Malformed(reason: "control character in string", offset: index - 1)
            }
        }
        throw Malformed(reason: "unterminated string", offset: start)
    }

    /// Skips a number, checking its grammar (RFC 8259 §6) without converting it.
    private mutating func skipNumber() throws(Malformed) {
        let start = index
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard isDigit(peek()) else { throw Malformed(reason: "invalid number", offset: start) }
        if peek() == UInt8(ascii: "0") { index += 1 } else { while isDigit(peek()) { index += 1 } }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard isDigit(peek()) else { throw Malformed(reason: "invalid number", offset: start) }
            while isDigit(peek()) { index += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard isDigit(peek()) else { throw Malformed(reason: "invalid number", offset: start) }
            while isDigit(peek()) { index += 1 }
        }
    }

    private mutating func skipLiteral(_ literal: String) throws(Malformed) {
        for byte in literal.utf8 { try expect(byte) }
    }

    private mutating func readString() throws(Malformed) -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        // Fast path: no escapes.
        while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
            guard byte >= 0x20 else { throw Malformed(reason: "control character in string", offset: index) }
            index += 1
        }
        guard let stop = peek() else { throw Malformed(reason: "unterminated string", offset: start) }
        if stop == UInt8(ascii: "\"") {
            index += 1
            guard let text = String(validating: bytes[start..<index - 1], as: UTF8.self) else {
                throw Malformed(reason: "invalid UTF-8", offset: start)
            }
            return text
        }
        var scalars = [UInt8](bytes[start..<index])
        while let byte = peek() {
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: scalars, as: UTF8.self) else {
                    throw Malformed(reason: "invalid UTF-8", offset: start)
                }
                return text
            case UInt8(ascii: "\\"): try readEscape(into: &scalars)
            case 0..<0x20: throw Malformed(reason: "control character in string", offset: index - 1)
            default:
                // The run up to the next quote, escape or control character in one copy: a legal
                // text is long runs between newlines.
                let run = index - 1
                while let next = peek(), next != UInt8(ascii: "\""), next != UInt8(ascii: "\\"), next >= 0x20 { index += 1 }
                scalars.append(contentsOf: bytes[run..<index])
            }
        }
        throw Malformed(reason: "unterminated string", offset: start)
    }

    private mutating func readEscape(into out: inout [UInt8]) throws(Malformed) {
        guard let byte = peek() else { throw Malformed(reason: "unterminated escape", offset: index) }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var code = try readHex4()
            if (0xD800..<0xDC00).contains(code) {
                guard peek() == UInt8(ascii: "\\") else { throw Malformed(reason: "lone surrogate", offset: index) }
                index += 1
                try expect(UInt8(ascii: "u"))
                let low = try readHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw Malformed(reason: "bad surrogate pair", offset: index) }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(code) else { throw Malformed(reason: "invalid code point", offset: index) }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        default: throw Malformed(reason: "invalid escape", offset: index - 1)
        }
    }

    /// Four hex digits and nothing else: `UInt32(_:radix:)` would also take a sign (`\u+041`),
    /// which JSON and Foundation's decoder refuse.
    private mutating func readHex4() throws(Malformed) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Malformed(reason: "short \\u escape", offset: index) }
        guard let value = Self.hex4(bytes, at: index) else { throw Malformed(reason: "invalid \\u escape", offset: index) }
        index += 4
        return value
    }

    /// The four hex digits at `index` (the caller checked they are there), or `nil`.
    static func hex4<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at index: Int) -> UInt32? where Bytes.Index == Int {
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
