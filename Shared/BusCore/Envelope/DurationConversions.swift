extension Duration {
    /// The duration in seconds, for APIs that take a `TimeInterval`.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// The duration in whole microseconds, rounded down (latency histograms).
    public var inMicroseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }

    /// The duration in whole milliseconds, rounded down (poll timeouts, configuration text).
    public var inMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
