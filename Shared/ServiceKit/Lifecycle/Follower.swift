import Bus
import Contracts
import ServiceLifecycle

/// What a ``Follower`` is handed, one at a time.
public enum FollowerInput: Sendable {
    /// A live event, as pub/sub delivered it: it may repeat one applied before or come after a
    /// lost one (``EventOrder`` says which).
    case event(Envelope)
    /// The beat: once at start, then every ``Follower/tickInterval``. A follower catches up,
    /// revalidates or reloads here, which also finds a lost last event no later event would reveal.
    case tick
}

/// A job that keeps some state in step with another service: its live events over pub/sub the
/// moment they arrive, and a tick at start and at every interval for what pub/sub lost (it drops
/// messages when a subscriber is down, joins late or falls behind). One loop for every follower
/// (the event consumers, the gateway's legal texts and session revocations, Accounts' terms
/// catalogue), so each says only how it takes an event and what it does on a tick.
///
/// Both inputs go through one stream and are handled on one task, one at a time, so the state a
/// follower keeps never sees two steps interleave, and ``Progress`` (what it carries from one
/// step to the next: a schedule, a failure streak) needs no lock. The loop ends when graceful
/// shutdown begins; a step already running finishes, and the subscription is closed.
public protocol Follower: Service {
    /// What one step leaves for the next; `Void` for a follower that keeps all its state elsewhere.
    associatedtype Progress = Void
    /// The publisher's events.
    var events: EventSubscriber { get }
    /// How long from one tick to the next.
    var tickInterval: Duration { get }
    /// The progress before the first step.
    func start() -> Progress
    /// Handles one input; it logs its own failures and never throws, so one bad step never ends
    /// the job (the next tick is the retry).
    func follow(_ input: FollowerInput, _ progress: inout Progress) async
}

extension Follower where Progress == Void {
    public func start() {}
}

extension Follower {
    public func run() async throws {
        let (inputs, feed) = AsyncStream.makeStream(of: FollowerInput.self)
        let live = Task { [events] in
            for await event in events { feed.yield(.event(event.envelope)) }
        }
        let ticker = Task { [tickInterval] in
            while !Task.isCancelled {
                feed.yield(.tick)
                try? await Task.sleep(for: tickInterval)
            }
        }
        defer {
            live.cancel()
            ticker.cancel()
        }
        var progress = start()
        for await input in inputs.cancelOnGracefulShutdown() { await follow(input, &progress) }
        await events.close()
    }
}
