import Foundation

/// One environment variable a service reads: a row of the reference table that `--help-env` prints
/// and the README is generated from.
public struct EnvironmentVariable: Sendable, Hashable {
    /// The variable name, e.g. `LOG_LEVEL`.
    public let name: String
    /// The default as it would be written in the environment; `<redacted>` for a secret with a default.
    public let defaultValue: String
    /// Whether the value is wrapped in ``Secret`` and kept out of logs.
    public let isSecret: Bool
    /// One line saying what the variable controls.
    public let summary: String

    public init(name: String, defaultValue: String, isSecret: Bool, summary: String) {
        self.name = name
        self.defaultValue = defaultValue
        self.isSecret = isSecret
        self.summary = summary
    }
}

extension [EnvironmentVariable] {
    /// A Markdown table `| Variable | Default | Secret | Description |`, one row per variable in the
    /// order given. Pipes inside cells are escaped so the table stays intact.
    public func markdownTable() -> String {
        func cell(_ text: String) -> String {
            text.isEmpty ? "" : text.replacingOccurrences(of: "|", with: "\\|")
        }
        var lines = ["| Variable | Default | Secret | Description |", "| --- | --- | --- | --- |"]
        for variable in self {
            let defaultCell = variable.defaultValue.isEmpty ? "(empty)" : "`\(cell(variable.defaultValue))`"
            lines.append(
                "| `\(variable.name)` | \(defaultCell) | \(variable.isSecret ? "yes" : "no") | \(cell(variable.summary)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
