/// A `host:port` pair read from configuration, e.g. `127.0.0.1:8081` or `[::1]:8081`.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// The host without brackets: `127.0.0.1`, `::1`, `localhost`.
    public var host: String
    /// The TCP port, 0...65535 (0 asks the kernel for an ephemeral port).
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`; an IPv6 host must be bracketed (`[::1]:80`). Returns `nil` when malformed.
    public init?(parsing text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { return nil }
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
