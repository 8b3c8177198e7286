/// A process-wide readers–writer gate over the shared test cluster: ordinary database tests
/// share it, tests that restart the cluster take it exclusively. Writers are preferred so a
/// restart test is not starved by a stream of ordinary tests.
actor ClusterGate {
    static let shared = ClusterGate()
    /// Set inside `withExclusive`: lets ``TestDatabase/restartCluster(mode:)`` check its caller.
    @TaskLocal static var holdsExclusive = false
    /// Set while a task holds the shared side: a nested ``TestDatabase/withSchema`` in the same task
    /// must not queue again, or a writer waiting in between would deadlock the two.
    @TaskLocal static var holdsShared = false

    private var readers = 0
    private var writing = false
    private var waitingReaders: [CheckedContinuation<Void, Never>] = []
    private var waitingWriters: [CheckedContinuation<Void, Never>] = []

    func acquireShared() async {
        if !writing && waitingWriters.isEmpty {
            readers += 1
            return
        }
        await withCheckedContinuation { waitingReaders.append($0) }
    }

    func releaseShared() {
        readers -= 1
        if readers == 0, !waitingWriters.isEmpty {
            writing = true
            waitingWriters.removeFirst().resume()
        }
    }

    func acquireExclusive() async {
        if !writing && readers == 0 {
            writing = true
            return
        }
        await withCheckedContinuation { waitingWriters.append($0) }
    }

    func releaseExclusive() {
        if !waitingWriters.isEmpty {
            waitingWriters.removeFirst().resume()  // stays `writing`
            return
        }
        writing = false
        readers += waitingReaders.count
        for reader in waitingReaders { reader.resume() }
        waitingReaders = []
    }
}

extension ClusterGate {
    enum Mode { case shared, exclusive }

    /// Runs `body` holding the gate in `mode` (marked in the task-local flag of that mode), and
    /// releases it also when `body` throws.
    static func holding<T>(_ mode: Mode, _ body: () async throws -> T) async throws -> T {
        let flag = mode == .shared ? $holdsShared : $holdsExclusive
        mode == .shared ? await shared.acquireShared() : await shared.acquireExclusive()
        do {
            let value = try await flag.withValue(true, operation: body)
            mode == .shared ? await shared.releaseShared() : await shared.releaseExclusive()
            return value
        } catch {
            mode == .shared ? await shared.releaseShared() : await shared.releaseExclusive()
            throw error
        }
    }
}
