import Bus
import Foundation

/// tus `Upload-Metadata`: comma-separated `key base64value` pairs (a key alone has no value).
/// The keys read: `filename` (or `name`), `filetype` (or `contentType`, `content_type`), `type`
/// (seed 002's document type, required), `title` (defaults to the file name), `description`,
/// `schoolId` (or `school_id`) and `version`.
package struct TusMetadata: Equatable {
    var pairs: [String: String] = [:]

    init(header: String?) throws {
        for item in (header ?? "").split(separator: ",") {
            let parts = item.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard let key = parts.first.map(String.init), !key.isEmpty else { continue }
            guard parts.count == 2 else {
                pairs[key] = ""
                continue
            }
            guard let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
                let value = String(data: data, encoding: .utf8)
            else {
                throw BusError(.invalidArgument, "Upload-Metadata: the value of \(key) is not base64 UTF-8")
            }
            pairs[key] = value
        }
    }

    func first(_ keys: String...) -> String? {
        keys.lazy.compactMap { pairs[$0] }.first { !$0.isEmpty }
    }

    var fileName: String? { first("filename", "name") }
    var fileType: String? { first("filetype", "contentType", "content_type") }
    var title: String? { first("title") ?? fileName }
    var description: String? { first("description") }
    var schoolId: String? { first("schoolId", "school_id") }
    var type: String? { first("type", "documentType", "document_type") }
    var version: Int? { first("version").flatMap { Int($0) } }
}
