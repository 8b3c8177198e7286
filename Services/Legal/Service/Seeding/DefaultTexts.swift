import Contracts
import Foundation

/// The texts the service ships and publishes on its first start, so the app has a privacy
/// policy and terms to show (and users something to accept) before an operator publishes any.
/// They live as markdown resources (`DefaultTexts/<type>.md`) so they read and diff as documents.
public enum DefaultTexts {
    /// The version string of each shipped text. The terms carry the date the seed's sign-up
    /// contract (seed 004) hard-codes as `tos_version`, "2025-12-12", so that client works as
    /// written; the privacy policy is "1.0", as seed 000 shows.
    public static func version(of type: LegalDocumentType) -> String {
        switch type {
        case .privacyPolicy: "1.0"
        case .termsOfService: "2025-12-12"
        }
    }
    /// The shipped markdown of `type`.
    public static func content(of type: LegalDocumentType) throws -> String {
        let url = try LegalServiceDescription.resourceDirectory("DefaultTexts").appendingPathComponent("\(type.rawValue).md")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// One draft per document type, effective when published, requiring acceptance (nobody has
    /// accepted anything before the first version); "Last Updated" is the instant of publication.
    public static func drafts() throws -> [VersionDraft] {
        try LegalDocumentType.allCases.map { type in
            VersionDraft(type: type, version: version(of: type), content: try content(of: type), lastUpdated: nil, effectiveAt: nil, material: true)
        }
    }
}
