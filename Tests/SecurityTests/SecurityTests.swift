import Testing

/// The parent of every HTTP security suite: each test starts the real Legal, Audit,
/// Accounts, Documents and Gateway executables, so they run one stack at a time. Tagged `.long`
/// so a developer can leave them out (`--skip SecurityTests`); `deploy/test` runs them.
@Suite(.serialized, .tags(.long)) enum SecurityTests {}

extension Tag {
    /// Suites that start whole stacks of executables and take minutes.
    @Tag static var long: Self
}
