/// One gateway stack (five executables) at a time in the test process, whichever target's suite
/// asks: `GatewayTests` and `SecurityTests` each run their stacks one after another, and this
/// keeps the two targets from running theirs side by side on a small machine, where the load
/// would disturb timing-sensitive tests.
actor StackGate {
    static let shared = StackGate()

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }

    /// Runs `body` holding the gate; releases it also when `body` throws.
    static func holding<T>(_ body: () async throws -> T) async throws -> T {
        await shared.acquire()
        do {
            let result = try await body()
            await shared.release()
            return result
        } catch {
            await shared.release()
            throw error
        }
    }
}
