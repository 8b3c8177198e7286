/// The services of the system and their default local addresses (DESIGN.md §2): RPC on 555N,
/// events on 565N, health on 575N, all on 127.0.0.1 unless configured otherwise.
public enum ServiceName: String, Sendable, CaseIterable {
    case legal, accounts, documents, audit

    var index: Int {
        switch self {
        case .legal: 1
        case .accounts: 2
        case .documents: 3
        case .audit: 4
        }
    }

    public var defaultRPCEndpoint: String { "tcp://127.0.0.1:\(5550 + index)" }
    public var defaultEventsEndpoint: String { "tcp://127.0.0.1:\(5650 + index)" }
    public var defaultHealthPort: Int { 5750 + index }
    /// The environment-variable prefix, e.g. `LEGAL`.
    public var variablePrefix: String { rawValue.uppercased() }
}
