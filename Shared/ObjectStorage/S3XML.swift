/// The XML S3 speaks, read by a parser of our own: elements, attributes skipped, text, the five
/// named entities and numeric character references, the declaration and comments skipped. S3's
/// responses use nothing else, and Foundation's XMLParser would make the runtime image carry
/// libxml2 for these few fields.
struct XMLElement: Sendable, Equatable {
    var name: String
    var text: String = ""
    var children: [XMLElement] = []

    /// The first child named `name`.
    func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }
    /// Every child named `name`, in order.
    func all(_ name: String) -> [XMLElement] { children.filter { $0.name == name } }
    /// The text of the first child named `name`.
    subscript(_ name: String) -> String? { child(name)?.text }

    /// Parses one document; nil when it is not well-formed enough to read.
    static func parse(_ bytes: [UInt8]) -> XMLElement? {
        var reader = XMLReader(bytes: bytes)
        return reader.document()
    }
}

private struct XMLReader {
    let bytes: [UInt8]
    var index = 0

    mutating func document() -> XMLElement? {
        while skipToTag() {
            if starts(with: "<?") || starts(with: "<!") {
                skipMarkup()
                continue
            }
            return element()
        }
        return nil
    }

    /// Advances to the next `<`; false at the end.
    mutating func skipToTag() -> Bool {
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
        return index < bytes.count
    }

    func starts(with prefix: String) -> Bool {
        let prefix = Array(prefix.utf8)
        return index + prefix.count <= bytes.count && Array(bytes[index..<index + prefix.count]) == prefix
    }

    /// Skips `<?…?>`, `<!--…-->` or `<!…>`.
    mutating func skipMarkup() {
        let end = starts(with: "<!--") ? "-->" : ">"
        while index < bytes.count, !starts(with: end) { index += 1 }
        index = min(bytes.count, index + end.utf8.count)
    }

    /// Reads `<name …>children and text</name>` or `<name …/>`, `index` at its `<`.
    mutating func element() -> XMLElement? {
        index += 1
        let nameStart = index
        while index < bytes.count, !Self.endsName(bytes[index]) { index += 1 }
        guard index > nameStart else { return nil }
        var node = XMLElement(name: String(decoding: bytes[nameStart..<index], as: UTF8.self))
        var quote: UInt8?
        while index < bytes.count {  // attributes, skipped (a `>` may sit inside quotes)
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                break
            }
            index += 1
        }
        guard index < bytes.count else { return nil }
        if bytes[index - 1] == UInt8(ascii: "/") {
            index += 1
            return node
        }
        index += 1
        var text: [UInt8] = []
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                text.append(bytes[index])
                index += 1
            } else if starts(with: "</") {
                while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
                index += 1
                node.text = Self.decodeEntities(text)
                return node
            } else if starts(with: "<!--") || starts(with: "<?") {
                skipMarkup()
            } else if starts(with: "<![CDATA[") {
                index += 9
                while index < bytes.count, !starts(with: "]]>") {
                    text.append(bytes[index])
                    index += 1
                }
                index += 3
            } else {
                guard let child = element() else { return nil }
                node.children.append(child)
            }
        }
        return nil
    }

    static func endsName(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "\t")
            || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }

    static func decodeEntities(_ raw: [UInt8]) -> String {
        let text = String(decoding: raw, as: UTF8.self)
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: amp)..<semi]
            switch entity {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let number =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst(1)) : nil
                if let number, let scalar = Unicode.Scalar(number) {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += rest[amp...semi]
                }
            }
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }
}

/// `text` escaped for an XML body we send (object keys in a multi-object delete).
func xmlEscape(_ text: String) -> String {
    var out = ""
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default: out.append(character)
        }
    }
    return out
}
