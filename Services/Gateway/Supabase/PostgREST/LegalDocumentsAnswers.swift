import GatewayService
import Locks

/// `/rest/v1/legal_documents` answers by request (query, `Range`, `Prefer: count`, media type),
/// each valid for one generation of the gateway's texts (``LegalTexts/Snapshot/generation``): the
/// texts change a few times a year and clients send a handful of distinct reads, so most reads
/// are answered without filtering, encoding or hashing anything.
final class LegalDocumentsAnswers: Sendable {
    /// At most this many distinct requests are memoised per generation: anything beyond is
    /// computed per request rather than grow memory.
    static let limit = 64

    private let memo = LockedValue<(generation: Int, answers: [String: PostgRESTReadAnswer])>((0, [:]))

    /// The answer to `request` made for `generation`, if any.
    func answer(_ request: String, generation: Int) -> PostgRESTReadAnswer? {
        memo.withLock { $0.generation == generation ? $0.answers[request] : nil }
    }

    /// Remembers the answer to `request` for `generation`; an older generation's is dropped.
    func remember(_ answer: PostgRESTReadAnswer, for request: String, generation: Int) {
        memo.withLock { memo in
            if generation < memo.generation { return }
            if generation > memo.generation { memo = (generation, [:]) }
            if memo.answers.count < Self.limit { memo.answers[request] = answer }
        }
    }
}
