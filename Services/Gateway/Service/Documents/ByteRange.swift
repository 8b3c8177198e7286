/// One `Range: bytes=…` request resolved against a document's length (RFC 9110 §14).
///
/// Only single ranges are honoured: `a-b`, `a-` and the suffix `-n`. A header that is not one of
/// these (another unit, several ranges, bad syntax) is ignored, as the RFC allows, and the whole
/// document is sent. A well-formed range that selects nothing is unsatisfiable (416).
package enum ByteRange: Equatable {
    /// No usable `Range`: the whole document, 200.
    case whole
    /// Bytes `start...end` (inclusive), 206.
    case partial(start: Int64, end: Int64)
    /// A valid range past the end, 416 with `Content-Range: bytes */<length>`.
    case unsatisfiable

    init(header: String?, length: Int64) {
        guard let header, header.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard !spec.contains(","), parts.count == 2 else {
            self = .whole
            return
        }
        let (first, last) = (parts[0].trimmingCharacters(in: .whitespaces), parts[1].trimmingCharacters(in: .whitespaces))
        let digits = { (text: String) in !text.isEmpty && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) }
        if first.isEmpty {
            // Suffix: the last n bytes (all of them when n is larger than the document).
            guard digits(last) else {
                self = .whole
                return
            }
            let count = Int64(last) ?? .max
            self = count == 0 || length == 0 ? .unsatisfiable : .partial(start: max(0, length - count), end: length - 1)
            return
        }
        guard digits(first), let start = Int64(first) else {
            self = .whole
            return
        }
        var end = length - 1
        if !last.isEmpty {
            guard digits(last) else {
                self = .whole
                return
            }
            // A last position beyond the end (or too large to parse) means "to the end".
            if let value = Int64(last) { end = min(value, length - 1) }
            guard (Int64(last) ?? .max) >= start else {
                self = .whole
                return
            }
        }
        self = start < length ? .partial(start: start, end: end) : .unsatisfiable
    }
}
