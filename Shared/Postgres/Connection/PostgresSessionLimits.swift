/// Bounds on what one session may wait for, set when it connects so they cost nothing per query:
/// PostgreSQL's `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout`
/// (through libpq's `options`, as `-c name=value`), and libpq's TCP keepalives and
/// `tcp_user_timeout`. A value the connection string already sets wins over these.
public struct PostgresSessionLimits: Sendable, Equatable {
    public var statementTimeout: Duration
    public var lockTimeout: Duration
    public var idleInTransactionTimeout: Duration
    public var keepalivesIdle: Duration
    public var keepalivesInterval: Duration
    public var keepalivesCount: Int
    public var tcpUserTimeout: Duration

    public init(
        statementTimeout: Duration, lockTimeout: Duration, idleInTransactionTimeout: Duration,
        keepalivesIdle: Duration, keepalivesInterval: Duration, keepalivesCount: Int, tcpUserTimeout: Duration
    ) {
        self.statementTimeout = statementTimeout
        self.lockTimeout = lockTimeout
        self.idleInTransactionTimeout = idleInTransactionTimeout
        self.keepalivesIdle = keepalivesIdle
        self.keepalivesInterval = keepalivesInterval
        self.keepalivesCount = keepalivesCount
        self.tcpUserTimeout = tcpUserTimeout
    }
}

extension PostgresConfiguration {
    /// Adds `limits` to the connection options, keeping any the connection string set itself.
    public mutating func applySessionLimits(_ limits: PostgresSessionLimits) {
        let settings = [
            ("statement_timeout", limits.statementTimeout),
            ("lock_timeout", limits.lockTimeout),
            ("idle_in_transaction_session_timeout", limits.idleInTransactionTimeout),
        ]
        let existing = self["options"] ?? ""
        var options = existing.isEmpty ? [] : [existing]
        for (name, value) in settings where !existing.contains(name) {
            options.append("-c \(name)=\(Self.milliseconds(value))")
        }
        if !options.isEmpty { self["options"] = options.joined(separator: " ") }
        func setDefault(_ key: String, _ value: String) {
            if self[key] == nil { self[key] = value }
        }
        setDefault("keepalives", "1")
        setDefault("keepalives_idle", String(max(1, Self.seconds(limits.keepalivesIdle))))
        setDefault("keepalives_interval", String(max(1, Self.seconds(limits.keepalivesInterval))))
        setDefault("keepalives_count", String(limits.keepalivesCount))
        setDefault("tcp_user_timeout", String(Self.milliseconds(limits.tcpUserTimeout)))
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    private static func seconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds + (attoseconds > 0 ? 1 : 0)
    }
}
