/// Who a request acts for. Services honour it only from peers allowed to assert principals (the
/// gateway, the operator CLI): see ``RPCServer``.
public struct Principal: Sendable, Codable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Codable {
        case user, service, `operator`, anonymous
    }
    public var kind: Kind
    public var id: String

    public init(_ kind: Kind, _ id: String) {
        self.kind = kind
        self.id = id
    }

    public static func user(_ id: String) -> Principal { Principal(.user, id) }
    public static func service(_ name: String) -> Principal { Principal(.service, name) }
    public static func `operator`(_ name: String) -> Principal { Principal(.operator, name) }
    public static let anonymous = Principal(.anonymous, "")

    public var description: String { "\(kind.rawValue):\(id)" }
}
