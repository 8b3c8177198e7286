import Contracts
import Crypto
import Foundation
import Hex

/// Signs receipts and checkpoints with the service's Ed25519 key, and checks signatures against
/// it and any earlier keys still trusted after a rotation.
struct ReceiptSigner: Sendable {
    let key: Curve25519.Signing.PrivateKey
    /// Base64 of the raw 32-byte public key.
    let publicKey: String
    /// Current and earlier public keys, for verification.
    let trusted: [Curve25519.Signing.PublicKey]

    init(privateKey: Curve25519.Signing.PrivateKey, previousPublicKeys: [Curve25519.Signing.PublicKey] = []) {
        key = privateKey
        publicKey = privateKey.publicKey.rawRepresentation.base64EncodedString()
        trusted = [privateKey.publicKey] + previousPublicKeys
    }

    func sign(_ text: String) -> String {
        // Signing only fails if the key is unusable, which init has ruled out.
        (try? key.signature(for: Data(text.utf8)))?.base64EncodedString() ?? ""
    }

    func isValid(signature: String, for text: String) -> Bool {
        guard let bytes = Data(base64Encoded: signature) else { return false }
        let message = Data(text.utf8)
        return trusted.contains { $0.isValidSignature(bytes, for: message) }
    }

    func signed(_ receipt: ConsentReceipt) -> ConsentReceipt {
        var receipt = receipt
        receipt.signature = sign(receipt.signedText)
        return receipt
    }

    /// The text a checkpoint signature covers.
    static func checkpointText(chain: Int, position: Int64, headHash: [UInt8], milliseconds: Int64) -> String {
        ["recruiting-compass-checkpoint-v1", String(chain), String(position), Hex.string(headHash), String(milliseconds)]
            .joined(separator: "\n")
    }
}
