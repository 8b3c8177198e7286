import Logging

/// How log lines are written: `text` for people at a terminal, `json` for log collectors.
public enum LogFormat: String, Sendable, CaseIterable {
    /// `2026-11-22T02:44:00.123Z info legal: message key=value [Source]`
    case text
    /// One JSON object per line (see ``JSONLogHandler``).
    case json
}

extension Logger.Level {
    /// Every level name `LOG_LEVEL` accepts, from the most verbose.
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
