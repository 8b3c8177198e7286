import Bus
import Contracts
import Crypto
import Foundation
import Identity

/// `accounts.public_keys`: the Ed25519 public keys of session tokens and deletion certificates,
/// current then previous, so the gateway and anyone holding a certificate verify offline.
struct PublicKeysHandler: Sendable {
    let sessionKeys: SessionKeySet
    let certificateKeys: SessionKeySet

    func register(on server: RPCServer) {
        let reply = AccountsPublicKeys.Reply(sessionKeys: Self.named(sessionKeys), certificateKeys: Self.named(certificateKeys))
        server.register(AccountsPublicKeys.self) { _, _ in reply }
    }

    static func named(_ set: SessionKeySet) -> [NamedPublicKey] {
        set.publicKeys.map { NamedPublicKey(keyId: $0.id, publicKey: $0.key.rawRepresentation.base64EncodedString()) }
    }
}
