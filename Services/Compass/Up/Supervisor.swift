import Foundation
import Retry

/// Runs the stack's children: starts each in order and waits until it is ready, restarts one that
/// crashes (with backoff: 1 s, doubling to 30 s, back to 1 s once it has run a minute), and stops
/// them all — gateway first, Legal last — when asked.
actor Supervisor {
    struct Spec: Sendable {
        let name: String
        let executable: URL
        let environment: [String: String]
        let readyURL: String
        let colour: Int
        var arguments: [String] = []
        /// How long a stop waits after SIGTERM before SIGKILL.
        var stopGrace: Duration = .seconds(35)
    }

    private var children: [String: ChildProcess] = [:]
    private var startedAt: [String: ContinuousClock.Instant] = [:]
    /// Each child's crashes in a row (a run of a minute or more ends the row).
    private var crashes: [String: Int] = [:]
    private static let restartBackoff = Backoff(first: .seconds(1), maximum: .seconds(30))
    private var order: [String] = []
    private var specs: [String: Spec] = [:]
    private var stopping = false

    /// Starts `spec` and waits until its `/readyz` answers 200; throws when it exits first or is
    /// not ready within `timeout`.
    func start(_ spec: Spec, timeout: Duration = .seconds(120)) async throws {
        specs[spec.name] = spec
        if !order.contains(spec.name) { order.append(spec.name) }
        try launch(spec)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let response = await HTTPProbe.get(spec.readyURL, timeout: 1), response.status == 200 { return }
            if children[spec.name]?.isRunning != true, !stopping {
                throw CLIError("\(spec.name) exited before it was ready (its output is above)")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw CLIError("\(spec.name) was not ready within \(timeout) (\(spec.readyURL))")
    }

    private func launch(_ spec: Spec) throws {
        let supervisor = self
        let child = try ChildProcess(
            name: spec.name, executable: spec.executable, arguments: spec.arguments, environment: spec.environment, colour: spec.colour
        ) { status in
            Task { await supervisor.exited(spec.name, status: status) }
        }
        children[spec.name] = child
        startedAt[spec.name] = .now
    }

    /// A child ended: expected while stopping; otherwise reported and restarted after its backoff.
    private func exited(_ name: String, status: Int32) async {
        guard !stopping, let spec = specs[name] else { return }
        let ranFor = ContinuousClock.now - (startedAt[name] ?? .now)
        let crashesInARow = ranFor > .seconds(60) ? 1 : (crashes[name] ?? 0) + 1
        crashes[name] = crashesInARow
        let delay = Self.restartBackoff.delay(after: crashesInARow)
        ConsoleOutput.say("\(name) exited with status \(status) after \(ranFor.components.seconds) s; restarting in \(delay.components.seconds) s")
        try? await Task.sleep(for: delay)
        guard !stopping else { return }
        do { try launch(spec) } catch {
            ConsoleOutput.say("could not restart \(name): \(error)")
        }
    }

    /// SIGTERM to every child in reverse start order, each given its spec's grace to finish
    /// (services drain their requests and flush their outboxes), then SIGKILL.
    func stopAll() async {
        stopping = true
        for name in order.reversed() {
            guard let child = children[name], child.isRunning else { continue }
            child.signal(SIGTERM)
            let grace = specs[name]?.stopGrace ?? .seconds(35)
            let deadline = ContinuousClock.now + grace
            while child.isRunning, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
            }
            if child.isRunning {
                ConsoleOutput.say("\(name) did not stop within \(grace); killing it")
                child.signal(SIGKILL)
            }
        }
    }

    var processIDs: [String: Int32] { children.mapValues(\.pid) }
}
