import Foundation

/// Runs blocking work (a child process's wait, a file read) on a thread of its own and awaits its
/// result, so the cooperative pool (two threads here) is never held up by it.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
