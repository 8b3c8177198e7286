/// Events the Legal service publishes (topic = the type), each through its outbox.
public enum LegalEvents {
    /// A new version was published; the payload is its ``LegalVersionSummary``.
    public static let published = "legal.published"
}
