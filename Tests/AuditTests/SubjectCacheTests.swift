import Foundation
import Testing

@testable import AuditService

/// The subjects Audit's writers keep between batches, without a database: a batch is served only
/// when every user is kept and young enough; an erasure drops its user at once; a full cache
/// makes room; lifetime zero keeps nothing.
@Suite struct SubjectCacheTests {
    static func subject() -> Subject { Subject(pseudonym: UUID(), secret: Array(repeating: 7, count: 32)) }

    @Test func aBatchIsServedOnlyWhenEveryUserIsKeptAndYoung() {
        let cache = SubjectCache(lifetime: .seconds(60))
        let (a, b) = (UUID(), UUID())
        let start = ContinuousClock.now
        let kept = Self.subject()
        cache.store([a: kept], now: start)
        #expect(cache.subjects(of: [a], now: start + .seconds(59))?[a]?.pseudonym == kept.pseudonym)
        #expect(cache.subjects(of: [a, b], now: start) == nil, "one user not kept: the batch reads them all")
        #expect(cache.subjects(of: [a], now: start + .seconds(60)) == nil, "expired")
    }

    @Test func anErasedUserIsDroppedAtOnce() {
        let cache = SubjectCache(lifetime: .seconds(60))
        let user = UUID()
        cache.store([user: Self.subject()])
        cache.forget(user)
        #expect(cache.subjects(of: [user]) == nil)
    }

    /// A writer that read a subject before an erasure stores it after the erasure forgot it (the
    /// erasure waited for the writer's commit): it is not kept, so the erased secret stays out.
    @Test func subjectsReadBeforeAnErasureAreNotKeptAfterIt() {
        let cache = SubjectCache(lifetime: .seconds(60))
        let (user, erased) = (UUID(), UUID())
        let beforeReading = cache.erasuresNoted
        cache.forget(erased)
        cache.store([user: Self.subject(), erased: Self.subject()], ifNoErasureSince: beforeReading)
        #expect(cache.subjects(of: [erased]) == nil)
        #expect(cache.subjects(of: [user]) == nil, "one count for every user: nothing read before the erasure is kept")
        cache.store([user: Self.subject()], ifNoErasureSince: cache.erasuresNoted)
        #expect(cache.subjects(of: [user]) != nil, "read after it: kept")
    }

    @Test func aFullCacheDropsTheExpiredAndThenEverything() {
        let cache = SubjectCache(lifetime: .seconds(60), capacity: 3)
        let start = ContinuousClock.now
        let (old, young) = (UUID(), UUID())
        cache.store([old: Self.subject()], now: start)
        cache.store([young: Self.subject()], now: start + .seconds(50))
        let late = start + .seconds(70)
        let two = [UUID(): Self.subject(), UUID(): Self.subject()]
        cache.store(two, now: late)  // 2 + 2 > 3: the expired one goes, and there is room
        #expect(cache.subjects(of: [young] + Array(two.keys), now: late) != nil)
        let more = [UUID(): Self.subject()]
        cache.store(more, now: late)  // 3 + 1 > 3 with nothing expired: everything goes
        #expect(cache.subjects(of: [young], now: late) == nil)
        #expect(cache.subjects(of: Array(more.keys), now: late) != nil)
    }

    @Test func lifetimeZeroKeepsNothing() {
        let cache = SubjectCache(lifetime: .zero)
        let user = UUID()
        cache.store([user: Self.subject()])
        #expect(cache.subjects(of: [user]) == nil)
    }
}
