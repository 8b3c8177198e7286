/// The legal documents users read (seeds 000 and 001). A closed set: any other value is
/// `invalid_argument` when a request is decoded.
public enum LegalDocumentType: String, Codable, Sendable, CaseIterable, Hashable {
    case privacyPolicy = "privacy_policy"
    case termsOfService = "terms_of_service"
}
