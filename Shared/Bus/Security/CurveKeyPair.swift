import CZeroMQ

/// A CurveZMQ key pair in Z85 text (40 characters each), the form configuration carries.
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: String
    public let secretKey: String

    /// A fresh key pair from libzmq's CSPRNG.
    public static func generate() throws -> CurveKeyPair {
        var publicKey = [CChar](repeating: 0, count: 41)
        var secretKey = [CChar](repeating: 0, count: 41)
        try zmqCall("zmq_curve_keypair") { zmq_curve_keypair(&publicKey, &secretKey) }
        return CurveKeyPair(publicKey: String(nulTerminated: publicKey), secretKey: String(nulTerminated: secretKey))
    }

    /// Rebuilds a pair from its secret key alone (the public key is derived), so deployments
    /// configure one secret per process.
    public init(secretKey: String) throws {
        guard secretKey.utf8.count == 40 else { throw CurveKeyError.malformed("secret key must be 40 Z85 characters") }
        var publicKey = [CChar](repeating: 0, count: 41)
        try zmqCall("zmq_curve_public") { zmq_curve_public(&publicKey, secretKey) }
        self.init(publicKey: String(nulTerminated: publicKey), secretKey: secretKey)
    }

    public init(publicKey: String, secretKey: String) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }
}

public enum CurveKeyError: Error, Sendable, Equatable {
    case malformed(String)
}

/// Z85 text of a 32-byte binary key, as ZAP hands the client's key over.
func z85Encode(_ key: [UInt8]) -> String? {
    guard key.count == 32 else { return nil }
    var text = [CChar](repeating: 0, count: 41)
    guard zmq_z85_encode(&text, key, 32) != nil else { return nil }
    return String(nulTerminated: text)
}

/// `zmq_z85_decode`, for tests that build ZAP requests by hand.
func zmqZ85Decode(_ out: UnsafeMutablePointer<UInt8>, _ text: UnsafePointer<CChar>) -> Bool {
    zmq_z85_decode(out, text) != nil
}
