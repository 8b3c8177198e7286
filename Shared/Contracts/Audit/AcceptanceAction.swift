/// What a user did with a version of a legal document.
public enum AcceptanceAction: String, Codable, Sendable, CaseIterable, Hashable {
    /// Agreed to it (terms of service, or privacy policy when acceptance is asked).
    case accept
    /// Confirmed having read it (privacy policy, seed 000).
    case acknowledge
    /// Refused it: the user cannot go on (seed 001).
    case decline
}
