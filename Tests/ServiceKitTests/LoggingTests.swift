import Foundation
import Locks
import Logging
import Testing

@testable import ServiceKit

/// Collects the lines a handler writes.
final class CapturedLines: Sendable {
    private let lines = LockedValue<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    var output: LogOutput { LogOutput { line in self.lines.withLock { $0.append(line) } } }
}

struct Failure: Error, CustomStringConvertible {
    var description: String { "disk on fire" }
}

@Suite("Logging")
struct LoggingTests {
    @Test func jsonHandlerWritesOneParsableObjectPerLine() throws {
        let captured = CapturedLines()
        var logger = Logger(label: "legal.rpc") {
            JSONLogHandler(label: $0, service: "legal", logLevel: .debug, output: captured.output)
        }
        logger[metadataKey: "instance"] = "a"
        logger.info(
            "listening\non \"port\"",
            metadata: ["port": "5551", "request": ["id": "42", "user": ["name": "ann"]], "tags": ["x", "y"], "level": "clash"])
        logger.debug("second", error: Failure())
        logger.trace("dropped below the level")

        let lines = captured.all
        try #require(lines.count == 2)
        #expect(lines.allSatisfy { !$0.contains("\n") })
        let first = try jsonObject(lines[0])
        #expect(first["level"] as? String == "info")
        #expect(first["service"] as? String == "legal")
        #expect(first["label"] as? String == "legal.rpc")
        #expect(first["message"] as? String == "listening\non \"port\"")
        #expect(first["source"] as? String == "ServiceKitTests")
        #expect(first["port"] as? String == "5551")
        #expect(first["instance"] as? String == "a")
        #expect(first["request.id"] as? String == "42")
        #expect(first["request.user.name"] as? String == "ann")
        #expect(first["tags"] as? [String] == ["x", "y"])
        #expect(first["metadata.level"] as? String == "clash")
        let timestamp = try #require(first["timestamp"] as? String)
        #expect(timestamp.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(timestamp)")
        let parsed = try #require(ISO8601DateFormatter.withMilliseconds.date(from: timestamp))
        #expect(abs(parsed.timeIntervalSinceNow) < 60)

        let second = try jsonObject(lines[1])
        #expect(second["level"] as? String == "debug")
        #expect(second["error"] as? String == "disk on fire")
    }

    @Test func textHandlerWritesReadableLines() throws {
        let captured = CapturedLines()
        let logger = Logger(label: "legal") { TextLogHandler(label: $0, output: captured.output) }
        logger.warning("slow query", metadata: ["ms": "1200", "sql": ["table": "docs"]])
        let line = try #require(captured.all.first)
        #expect(line.wholeMatch(of: /\S+Z warning legal: slow query ms=1200 sql\.table=docs \[ServiceKitTests\]/) != nil, "\(line)")
    }

    @Test func bootstrapTwiceDoesNotCrashAndAppliesTheLatestSettings() throws {
        let captured = CapturedLines()
        LoggingBootstrap.bootstrap(service: "first", format: .text, level: .info, output: captured.output)
        LoggingBootstrap.bootstrap(service: "second", format: .json, level: .error, output: captured.output)
        let logger = Logger(label: "bootstrap-test")
        logger.warning("below error: dropped")
        logger.error("kept")
        let lines = captured.all.filter { $0.contains("bootstrap-test") }
        try #require(lines.count == 1)
        let object = try jsonObject(lines[0])
        #expect(object["service"] as? String == "second")
        #expect(object["message"] as? String == "kept")
    }
}

extension ISO8601DateFormatter {
    static var withMilliseconds: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
