import Testing

/// Every Documents suite, run one at a time: each starts real executables (Documents, and Legal,
/// Audit and Accounts for `account.deleted`) and moves up to 256 MB, and on this 2-core machine
/// running them all at once starved the timing-sensitive tests of other targets.
@Suite("Documents", .serialized)
struct DocumentsSuites {}
