import Hummingbird
import NIOCore
import Testing

@testable import GatewayService

/// The HTTP server's tasks run on its event loops (``EventLoopTaskExecutor``): after every
/// suspension, and in the child tasks they start.
@Suite struct EventLoopTaskExecutorTests {
    let loops = EventLoopGroupProvider.singleton.eventLoopGroup

    /// Whether the calling thread is one of `loops`' (`any()` is the caller's loop when it is one).
    func onALoop() -> Bool { loops.any().inEventLoop }

    @Test func aTaskThatPrefersTheLoopsRunsOnThemAcrossSuspensions() async throws {
        #expect(!onALoop(), "the test itself runs on the cooperative pool")
        let executor = EventLoopTaskExecutor(group: loops)
        let seen = try await withTaskExecutorPreference(executor) {
            var seen = [onALoop()]
            await Task.yield()
            seen.append(onALoop())
            // Resumed from the timer's thread: the job goes back to a loop.
            try await Task.sleep(for: .milliseconds(5))
            seen.append(onALoop())
            // Child tasks (Hummingbird's one per connection) inherit the preference.
            let children = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { onALoop() } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            return seen + children
        }
        #expect(seen == Array(repeating: true, count: 7))
    }

    @Test func aContinuationResumedOnALoopContinuesOnThatLoop() async throws {
        let executor = EventLoopTaskExecutor(group: loops)
        let loop = loops.next()
        let resumedOnItsLoop = await withTaskExecutorPreference(executor) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // As ``AcceptanceBatcher`` resumes its waiters: one job on the loop resumes them.
                loop.execute { continuation.resume() }
            }
            return loop.inEventLoop
        }
        #expect(resumedOnItsLoop)
    }
}
