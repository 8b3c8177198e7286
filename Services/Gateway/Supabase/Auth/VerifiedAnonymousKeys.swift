import Foundation
import GatewayService
import Locks

/// Anon keys that passed ``AnonymousKey``'s check in the last second, by their exact text.
///
/// Supabase clients send the anon key on every `/rest/v1` read (as `apikey` and as the bearer), and
/// checking it (JWS parsing, HMAC, claims decoding) was a fifth of the gateway's CPU on the legal
/// documents read. A key is the same bytes on every request, so a key that passed is believed again
/// for one second without the check. Only passes are kept: a forged or altered key differs in its
/// bytes and is checked in full every time. A key whose `exp` passes is refused at most a second
/// late (well within the leeway JWT checks usually allow). At most ``capacity`` keys are kept.
final class VerifiedAnonymousKeys: Sendable {
    static let lifetime: Duration = .seconds(1)
    static let capacity = 16

    private let passed = LockedValue<[String: ContinuousClock.Instant]>([:])

    /// Whether `key` passed the check less than ``lifetime`` ago.
    func contains(_ key: String, now: ContinuousClock.Instant = .now) -> Bool {
        passed.withLock { passed in
            guard let until = passed[key] else { return false }
            if now < until { return true }
            passed[key] = nil
            return false
        }
    }

    /// Records that `key` passed the check now.
    func remember(_ key: String, now: ContinuousClock.Instant = .now) {
        passed.withLock { passed in
            if passed.count >= Self.capacity { passed = passed.filter { now < $0.value } }
            if passed.count < Self.capacity { passed[key] = now + Self.lifetime }
        }
    }
}
