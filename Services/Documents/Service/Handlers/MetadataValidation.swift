import Bus
import Contracts
import Foundation

/// Input rules for `documents.create`, checked before anything is written.
enum MetadataValidation {
    static let maximumTitleLength = 500
    static let maximumDescriptionLength = 10_000
    static let maximumSchoolIdLength = 200

    /// The request as a ``NewDocument``, or `invalid_argument` / `payload_too_large`.
    static func newDocument(_ request: DocumentsCreate.Request, maxFileSize: Int64) throws -> NewDocument {
        let title = request.title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty, title.count <= maximumTitleLength else {
            throw BusError(.invalidArgument, "title must be 1 to \(maximumTitleLength) characters")
        }
        if let description = request.description, description.count > maximumDescriptionLength {
            throw BusError(.invalidArgument, "description must be at most \(maximumDescriptionLength) characters")
        }
        if let school = request.schoolId, school.isEmpty || school.count > maximumSchoolIdLength {
            throw BusError(.invalidArgument, "schoolId must be 1 to \(maximumSchoolIdLength) characters")
        }
        guard request.length >= 0 else { throw BusError(.invalidArgument, "length must not be negative") }
        guard request.length <= maxFileSize else {
            throw BusError(.payloadTooLarge, "the file is larger than the \(maxFileSize)-byte maximum", details: ["maximum": "\(maxFileSize)"])
        }
        let version = request.version ?? 1
        guard version >= 1 else { throw BusError(.invalidArgument, "version must be at least 1") }
        return NewDocument(
            ownerId: request.ownerId, type: request.type, title: title, description: request.description,
            fileType: try request.fileType.map(Self.fileType), schoolId: request.schoolId, fileName: request.fileName, version: version,
            length: request.length)
    }

    /// A MIME type `type/subtype` (parameters dropped), lowercased: the seed compares
    /// `application/pdf` exactly.
    static func fileType(_ text: String) throws -> String {
        let bare = text.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let value = bare.trimmingCharacters(in: .whitespaces).lowercased()
        let token = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$&^_.+-")
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        guard value.count <= 127, parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(token.contains) }) else {
            throw BusError(.invalidArgument, "fileType must be a MIME type such as video/mp4")
        }
        return value
    }
}
