import Foundation
import Logging
import Testing

@testable import ServiceKit

@Suite("Environment configuration")
struct ConfigurationTests {
    @Test func unsetAndEmptyVariablesYieldDefaults() throws {
        let environment = EnvironmentReader(["EMPTY": "  "])
        #expect(try environment.int("EMPTY", default: 7, "x") == 7)
        #expect(environment.string("MISSING", default: "fallback", "x") == "fallback")
        #expect(try environment.bool("MISSING_BOOL", default: true, "x") == true)
        #expect(environment.list("MISSING_LIST", default: ["a"], "x") == ["a"])
    }

    @Test func parsesEveryType() throws {
        let environment = EnvironmentReader([
            "NAME": " legal ", "COUNT": "42", "ENABLED": "Yes", "RATIO": "0.25", "GRACE": "1500ms",
            "LONG": "2m", "BARE": "3", "PEERS": "a, b,,c ", "RPC": "tcp://127.0.0.1:5551",
            "MANY": "tcp://127.0.0.1:5551, tcp://127.0.0.1:5552", "BIND": "[::1]:8081", "FORMAT": "JSON",
        ])
        #expect(environment.string("NAME", default: "", "x") == "legal")
        #expect(try environment.int("COUNT", default: 0, in: 0...100, "x") == 42)
        #expect(try environment.bool("ENABLED", default: false, "x"))
        #expect(try environment.double("RATIO", default: 1, "x") == 0.25)
        #expect(try environment.duration("GRACE", default: .zero, "x") == .milliseconds(1500))
        #expect(try environment.duration("LONG", default: .zero, "x") == .seconds(120))
        #expect(try environment.duration("BARE", default: .zero, "x") == .seconds(3))
        #expect(environment.list("PEERS", default: [], "x") == ["a", "b", "c"])
        #expect(try environment.url("RPC", default: "tcp://localhost:1", "x").absoluteString == "tcp://127.0.0.1:5551")
        #expect(try environment.urls("MANY", default: [], "x").map(\.port) == [5551, 5552])
        #expect(try environment.endpoint("BIND", default: Endpoint(host: "h", port: 1), "x") == Endpoint(host: "::1", port: 8081))
        #expect(try environment.choice("FORMAT", default: LogFormat.text, "x") == .json)
    }

    @Test(arguments: [
        ("PORT", "http", "an integer in 0...65535"),
        ("PORT", "70000", "an integer in 0...65535"),
        ("FLAG", "maybe", "one of true, false"),
        ("RATIO", "1e999", "a number"),
        ("GRACE", "soon", "a duration"),
        ("GRACE", "-5s", "a duration"),
        ("RPC", "127.0.0.1:5551", "an absolute URL"),
        ("BIND", "no-port", "host:port"),
        ("LEVEL", "loud", "one of trace, debug"),
    ])
    func badValueNamesTheVariableAndWhatWasExpected(name: String, value: String, expected: String) {
        let environment = EnvironmentReader([name: value])
        do {
            switch name {
            case "PORT": _ = try environment.int(name, default: 1, in: 0...65535, "x")
            case "FLAG": _ = try environment.bool(name, default: false, "x")
            case "RATIO": _ = try environment.double(name, default: 1, "x")
            case "GRACE": _ = try environment.duration(name, default: .seconds(1), "x")
            case "RPC": _ = try environment.url(name, default: "tcp://a:1", "x")
            case "BIND": _ = try environment.endpoint(name, default: Endpoint(host: "a", port: 1), "x")
            default: _ = try environment.choice(name, default: Logger.Level.info, "x")
            }
            Issue.record("\(name)=\(value) was accepted")
        } catch {
            #expect(error.variable == name)
            #expect(error.value == value)
            #expect(error.description.hasPrefix("\(name)=\"\(value)\" is invalid: expected \(expected)"))
        }
    }

    @Test func secretsAreRedactedEverywhere() {
        let environment = EnvironmentReader(["DATABASE_URL": "postgres://app:hunter2@db/app"])
        let secret = environment.secret("DATABASE_URL", default: "postgres://dev:devpass@localhost/dev", "Connection string.")
        #expect(secret.revealed == "postgres://app:hunter2@db/app")
        var dumped = ""
        dump(secret, to: &dumped)
        let renderings = [
            secret.description, secret.debugDescription, "\(secret)", String(describing: secret),
            String(reflecting: secret), dumped, "\(Logger.MetadataValue.stringConvertible(secret))",
        ]
        for rendering in renderings {
            #expect(!rendering.contains("hunter2"), "leaked in \(rendering)")
            #expect(rendering.contains("<redacted>"))
        }
        let row = environment.variables.first { $0.name == "DATABASE_URL" }
        #expect(row?.isSecret == true)
        #expect(row?.defaultValue == "<redacted>")
        #expect(!environment.variables.markdownTable().contains("devpass"))
    }

    @Test func errorForASecretVariableDoesNotEchoItsValue() {
        let error = ConfigurationError(variable: "API_KEY", value: nil, expected: "64 hex digits")
        #expect(error.description == "API_KEY=<redacted> is invalid: expected 64 hex digits")
    }

    @Test func referenceTableListsEveryVariableReadOnceInOrder() throws {
        let environment = EnvironmentReader([:])
        _ = try CommonConfiguration(environment: environment, defaultHealthPort: 5751)
        _ = environment.string("LOG_FORMAT", default: "ignored", "read twice")
        let names = environment.variables.map(\.name)
        #expect(
            names == [
                "SERVICE_VERSION", "LOG_FORMAT", "LOG_LEVEL", "HEALTH_HOST", "HEALTH_PORT", "READINESS_INTERVAL",
                "READINESS_TIMEOUT", "SHUTDOWN_TIMEOUT",
            ])
        let table = environment.variables.markdownTable()
        #expect(table.hasPrefix("| Variable | Default | Secret | Description |\n| --- | --- | --- | --- |\n"))
        #expect(table.contains("| `HEALTH_PORT` | `5751` | no | Port of the health server; 0 picks a free port. |"))
        #expect(table.contains("| `SHUTDOWN_TIMEOUT` | `30s` | no |"))
    }

    @Test func environmentReferenceIncludesServiceSettings() {
        struct Settings: EnvironmentSettings {
            let token: Secret<String>
            init(environment: EnvironmentReader) throws {
                token = environment.secret("LEGAL_TOKEN", default: "", "Operator token.")
                _ = try environment.int("LEGAL_WORKERS", default: 4, "Worker tasks.")
            }
        }
        let table = ServiceMain.environmentReference(settings: Settings.self, defaultHealthPort: 1)
        #expect(table.contains("| `LEGAL_TOKEN` | (empty) | yes | Operator token. |"))
        #expect(table.contains("| `LEGAL_WORKERS` | `4` | no | Worker tasks. |"))
        #expect(table.contains("`LOG_LEVEL`"))
    }

    @Test func commonConfigurationReadsItsVariables() throws {
        let environment = EnvironmentReader([
            "LOG_FORMAT": "json", "LOG_LEVEL": "debug", "HEALTH_HOST": "0.0.0.0", "HEALTH_PORT": "9100",
            "SERVICE_VERSION": "2.0.0", "SHUTDOWN_TIMEOUT": "5s",
        ])
        let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 1)
        #expect(configuration.logFormat == .json)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.health == Endpoint(host: "0.0.0.0", port: 9100))
        #expect(configuration.version == "2.0.0")
        #expect(configuration.shutdownTimeout == .seconds(5))
    }
}
