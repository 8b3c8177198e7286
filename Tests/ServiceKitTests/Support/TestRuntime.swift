import Foundation
import Locks
import Logging
import Testing

@testable import ServiceKit

/// A ``ServiceRuntime`` on an ephemeral loopback port with fast readiness polling, for tests.
func makeTestRuntime(name: String = "test-service", healthLimits: HealthServer.Limits = HealthServer.Limits())
    throws -> ServiceRuntime
{
    let environment = EnvironmentReader([
        "HEALTH_PORT": "0", "READINESS_INTERVAL": "50ms", "READINESS_TIMEOUT": "1s",
        "SHUTDOWN_TIMEOUT": "10s", "SERVICE_VERSION": "1.2.3",
    ])
    let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 0)
    var logger = Logger(label: name) { _ in SwiftLogNoOpLogHandler() }
    logger.logLevel = .critical
    return ServiceRuntime(
        name: name, configuration: configuration, logger: logger, metrics: MetricsBootstrap.bootstrap(),
        healthLimits: healthLimits)
}

/// Polls `path` until `accept` holds for the response, or fails the test after `timeout`.
func waitForResponse(
    _ path: String, port: Int, timeout: Duration = .seconds(20),
    until accept: (RawHTTPClient.Response) -> Bool
) async throws -> RawHTTPClient.Response {
    let deadline = ContinuousClock.now + timeout
    var last: RawHTTPClient.Response?
    while ContinuousClock.now < deadline {
        if let response = try? await RawHTTPClient.get(path, port: port) {
            if accept(response) { return response }
            last = response
        }
        try await Task.sleep(for: .milliseconds(25))
    }
    Issue.record("\(path) never matched; last response: \(String(describing: last))")
    throw RawHTTPClient.ClientError(description: "timed out waiting for \(path)")
}

/// A boolean shared between a test and the checks or services it drives.
final class Flag: Sendable {
    private let value: LockedValue<Bool>
    init(_ initial: Bool = false) { value = LockedValue(initial) }
    var isSet: Bool { value.withLock { $0 } }
    func set(_ newValue: Bool = true) { value.withLock { $0 = newValue } }
}

/// Parses a JSON object body.
func jsonObject(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    return try #require(object as? [String: Any], "not a JSON object: \(text)")
}
