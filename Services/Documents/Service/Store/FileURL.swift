import Foundation

/// The `file_url` of a document: `documents/<id>/<file name>`, assigned by the service. It always
/// contains `/` and an id never does, so seed 002's viewer rule (a reference with `/` is a file
/// URL, anything else an id) is never ambiguous.
enum FileURL {
    static let maximumLength = 2048

    /// The file URL of a new document; the name is reduced to safe characters.
    static func make(id: UUID, fileName: String?) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        var name = String((fileName ?? "").map { allowed.contains($0) ? $0 : "_" }.prefix(200))
        while name.hasPrefix(".") { name.removeFirst() }
        return "documents/\(id.uuidString.lowercased())/\(name.isEmpty ? "file" : name)"
    }

    /// The name kept for downloads (`Content-Disposition`): the uploader's, without control
    /// characters, at most 255 characters; nil when nothing is left.
    static func originalName(_ fileName: String?) -> String? {
        let kept = String(String.UnicodeScalarView((fileName ?? "").unicodeScalars.filter { $0.properties.generalCategory != .control }).prefix(255))
        return kept.trimmingCharacters(in: .whitespaces).isEmpty ? nil : kept
    }

    /// The stored form of a URL a caller gives: as stored, or an absolute or rooted URL whose path
    /// ends in it (the gateway may hand out `https://host/storage/v1/object/documents/…`). Nil when
    /// it cannot be one of ours (`invalid_argument`: "Invalid file URL").
    static func normalize(_ text: String) -> String? {
        guard !text.isEmpty, text.utf8.count <= maximumLength, text.contains("/"),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        var path = Substring(text)
        if let scheme = path.range(of: "://") {
            let rest = path[scheme.upperBound...]
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            path = rest[slash...]
        }
        if let start = path.range(of: "documents/") { path = path[start.lowerBound...] } else { return nil }
        if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "documents", UUID(uuidString: String(parts[1])) != nil, !parts[2].isEmpty else { return nil }
        return String(path).lowercasedIdentifier()
    }
}

extension String {
    /// Lowercases the id segment only (`documents/<ID>/Name` → `documents/<id>/Name`).
    fileprivate func lowercasedIdentifier() -> String {
        let parts = split(separator: "/", omittingEmptySubsequences: false)
        return "\(parts[0])/\(parts[1].lowercased())/\(parts[2])"
    }
}
