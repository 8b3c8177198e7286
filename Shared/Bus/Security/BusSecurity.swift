/// Transport security of a bound socket (RPC server or event publisher).
public enum ServerSecurity: Sendable {
    /// Plaintext, any peer admitted: local development only. Services log a warning when they
    /// run like this.
    case plaintext
    /// CurveZMQ with this server key pair; only the listed clients are admitted (ZAP).
    case curve(CurveKeyPair, admitted: ZAPPolicy)

    var isCurve: Bool { if case .curve = self { true } else { false } }
}

/// Transport security of a connecting socket (RPC client or event subscriber).
public enum ClientSecurity: Sendable {
    case plaintext
    /// CurveZMQ: our own key pair and the public key of the server we connect to.
    case curve(CurveKeyPair, serverPublicKey: String)
}
