import Testing

/// Every reliability suite, nested here so they run one at a time: each starts four services on
/// their own database (about 40 connections and most of a core), and the whole target runs beside
/// every other test target in `deploy/test`. Tagged `.long` (see ``Testing/Tag/long``).
@Suite(.serialized, .tags(.long))
struct ReliabilityTests {}
