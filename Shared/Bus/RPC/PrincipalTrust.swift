/// Which principal a request acts as: the one its envelope claims, or what the transport says of
/// the peer that sent it. A pure rule (no socket, no clock) so that every case is tested with
/// plain values; ``RPCServer`` applies it to each request.
///
/// Over CURVE the peer's admission name (ZAP `User-Id`) is the only fact a caller cannot forge:
/// a claim is honoured only from a peer allowed to assert principals, and the operator principal
/// only from the operator's own key. Over plaintext every claim is honoured: development only,
/// and the server warns of it at start.
struct PrincipalTrust: Sendable {
    /// The ZAP name of the operator's key (`compass keys generate` names it so): the only peer
    /// whose `operator` principal is honoured.
    static let operatorPeer = "operator"

    /// Whether the transport authenticates peers (CURVE).
    var authenticatesPeers: Bool
    /// Peers whose claims are honoured; `nil`: every admitted peer (``RPCServerOptions/principalAsserters``).
    var asserters: Set<String>?

    /// The principal the request acts as.
    /// - Parameters:
    ///   - claimed: the envelope's `principal`, if any.
    ///   - peer: the admission name of the sending key, `nil` when the transport gave none.
    func principal(claimed: Principal?, peer: String?) -> Principal {
        guard authenticatesPeers else { return claimed ?? .anonymous }
        guard let peer else { return .anonymous }
        let mayAssert = asserters.map { $0.contains(peer) } ?? true
        guard mayAssert, let claimed else { return .service(peer) }
        // Only the operator's own key claims the operator role: the gateway and Accounts assert
        // users' principals, and a stolen key of theirs must not make its holder an operator.
        if claimed.kind == .operator, peer != Self.operatorPeer { return .service(peer) }
        return claimed
    }
}
