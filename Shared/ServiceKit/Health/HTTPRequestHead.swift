/// The request line of an HTTP/1.x request: all the health server needs to route it.
struct HTTPRequestHead: Equatable {
    var method: String
    /// The path without the query string, e.g. `/readyz`.
    var path: String

    /// What the bytes received so far amount to.
    enum Parse: Equatable {
        /// The blank line ending the headers has not arrived yet.
        case incomplete
        /// The request line and headers exceed the limit: answer 431.
        case tooLarge
        /// Not an HTTP/1.x request: answer 400.
        case malformed
        case complete(HTTPRequestHead)
    }

    /// Parses `bytes` once the header block (`\r\n\r\n`) is complete; `limit` bounds request line
    /// plus headers.
    static func parse(_ bytes: [UInt8], limit: Int) -> Parse {
        guard let end = headerEnd(bytes) else {
            return bytes.count >= limit ? .tooLarge : .incomplete
        }
        if end > limit { return .tooLarge }
        guard let text = String(validating: bytes[..<end], as: UTF8.self) else { return .malformed }
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines[0].split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3,
            !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0 == "-") }),
            parts[1].hasPrefix("/"),
            parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0",
            lines.dropFirst().allSatisfy({ $0.contains(":") })
        else { return .malformed }
        let path = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return .complete(HTTPRequestHead(method: String(parts[0]), path: String(path)))
    }

    /// The index of the `\r\n\r\n` that ends the header block, if it has arrived.
    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
