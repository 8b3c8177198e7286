import Bus
import Foundation

extension EnvironmentReader {
    /// Any text; surrounding spaces are trimmed.
    public func string(_ name: String, default defaultValue: String, _ summary: String) -> String {
        // Parsing text cannot fail, so the typed throw never happens.
        (try? read(name, default: defaultValue, shownAs: defaultValue, summary, expected: "text") { $0 })
            ?? defaultValue
    }

    /// A decimal integer, optionally restricted to `range`.
    public func int(
        _ name: String, default defaultValue: Int, in range: ClosedRange<Int>? = nil, _ summary: String
    ) throws(ConfigurationError) -> Int {
        let expected = range.map { "an integer in \($0.lowerBound)...\($0.upperBound)" } ?? "an integer"
        return try read(name, default: defaultValue, shownAs: String(defaultValue), summary, expected: expected) {
            guard let value = Int($0), range?.contains(value) ?? true else { return nil }
            return value
        }
    }

    /// `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`, in any case.
    public func bool(_ name: String, default defaultValue: Bool, _ summary: String) throws(ConfigurationError) -> Bool {
        try read(
            name, default: defaultValue, shownAs: String(defaultValue), summary,
            expected: "one of true, false, 1, 0, yes, no, on, off"
        ) {
            switch $0.lowercased() {
            case "true", "1", "yes", "on": true
            case "false", "0", "no", "off": false
            default: nil
            }
        }
    }

    /// A finite decimal number.
    public func double(_ name: String, default defaultValue: Double, _ summary: String) throws(ConfigurationError)
        -> Double
    {
        try read(name, default: defaultValue, shownAs: String(defaultValue), summary, expected: "a number") {
            guard let value = Double($0), value.isFinite else { return nil }
            return value
        }
    }

    /// A non-negative duration: a number with a unit `ms`, `s`, `m` or `h` (`250ms`, `1.5s`, `2m`);
    /// a bare number means seconds.
    public func duration(_ name: String, default defaultValue: Duration, _ summary: String)
        throws(ConfigurationError) -> Duration
    {
        try read(
            name, default: defaultValue, shownAs: Self.format(defaultValue), summary,
            expected: "a duration such as 250ms, 5s, 2m or 1h"
        ) { Self.parseDuration($0) }
    }

    /// A comma-separated list; items are trimmed and empty items dropped (`a, b,,c` is `[a, b, c]`).
    public func list(_ name: String, default defaultValue: [String], _ summary: String) -> [String] {
        (try? read(
            name, default: defaultValue, shownAs: defaultValue.joined(separator: ","), summary,
            expected: "a comma-separated list"
        ) { Self.splitList($0) }) ?? defaultValue
    }

    /// An absolute URL with a scheme, e.g. `tcp://127.0.0.1:5551`, `postgres://host/db`, `ipc:///tmp/s`.
    public func url(_ name: String, default defaultValue: String, _ summary: String) throws(ConfigurationError) -> URL {
        try urls(name, default: [defaultValue], summary, single: true)[0]
    }

    /// A comma-separated list of absolute URLs, e.g. several instances of one service.
    public func urls(_ name: String, default defaultValue: [String], _ summary: String) throws(ConfigurationError)
        -> [URL]
    {
        try urls(name, default: defaultValue, summary, single: false)
    }

    private func urls(_ name: String, default defaultValue: [String], _ summary: String, single: Bool)
        throws(ConfigurationError) -> [URL]
    {
        let fallback = defaultValue.map { text in
            guard let url = Self.parseURL(text) else { preconditionFailure("default of \(name) is not a URL: \(text)") }
            return url
        }
        return try read(
            name, default: fallback, shownAs: defaultValue.joined(separator: ","), summary,
            expected: single
                ? "an absolute URL such as tcp://127.0.0.1:5551"
                : "a comma-separated list of absolute URLs such as tcp://127.0.0.1:5551,tcp://127.0.0.1:5552"
        ) { text in
            let parts = single ? [text] : Self.splitList(text)
            let parsed = parts.compactMap(Self.parseURL)
            return parsed.isEmpty || parsed.count != parts.count ? nil : parsed
        }
    }

    /// A `host:port` pair; IPv6 hosts in brackets (`[::1]:8081`).
    public func endpoint(_ name: String, default defaultValue: Endpoint, _ summary: String)
        throws(ConfigurationError) -> Endpoint
    {
        try read(
            name, default: defaultValue, shownAs: defaultValue.description, summary,
            expected: "host:port such as 127.0.0.1:8081 or [::1]:8081"
        ) { Endpoint(parsing: $0) }
    }

    /// One of a fixed set of words, e.g. `LOG_FORMAT=text|json`; matched without regard to case.
    public func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ name: String, default defaultValue: Value, _ summary: String
    ) throws(ConfigurationError) -> Value where Value.RawValue == String {
        let names = Value.allCases.map(\.rawValue)
        return try read(
            name, default: defaultValue, shownAs: defaultValue.rawValue, summary,
            expected: "one of \(names.joined(separator: ", "))"
        ) { raw in Value.allCases.first { $0.rawValue.lowercased() == raw.lowercased() } }
    }

    /// A secret string: never echoed in errors, shown as `<redacted>` in the reference table and logs.
    public func secret(_ name: String, default defaultValue: String, _ summary: String) -> Secret<String> {
        Secret(
            (try? read(name, default: defaultValue, shownAs: defaultValue, secret: true, summary, expected: "text") {
                $0
            }) ?? defaultValue)
    }

    static func splitList(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func parseURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty,
            text.contains("://")
        else { return nil }
        return url
    }

    static func parseDuration(_ text: String) -> Duration? {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1)]
        var number = Substring(text)
        var scale = 1.0
        if let unit = units.first(where: { text.lowercased().hasSuffix($0.suffix) }) {
            number = number.dropLast(unit.suffix.count)
            scale = unit.seconds
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0 else {
            return nil
        }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }

    static func format(_ duration: Duration) -> String {
        let milliseconds = duration.inMilliseconds
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
    }
}
