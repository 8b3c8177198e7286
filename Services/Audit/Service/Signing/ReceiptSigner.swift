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

    /// `receipt` signed on its own: the signature covers its ``ConsentReceipt/signedText``.
    func signed(_ receipt: ConsentReceipt) -> ConsentReceipt {
        var receipt = receipt
        receipt.signature = sign(receipt.signedText)
        receipt.proof = nil
        return receipt
    }

    /// `receipts` signed together with one signature: the root of their Merkle tree
    /// (``ReceiptTree``), each receipt carrying its inclusion proof. Signing is most of what a
    /// receipt costs; a group commit's batch shares one.
    func signedTogether(_ receipts: [ConsentReceipt]) -> [ConsentReceipt] {
        guard !receipts.isEmpty else { return [] }
        let tree = ReceiptTree.build(receipts.map(ReceiptTree.leafHash(of:)))
        let signature = sign(ReceiptProof.signedRootText(rootHex: Hex.string(tree.root), size: receipts.count))
        return receipts.enumerated().map { index, receipt in
            var receipt = receipt
            receipt.signature = signature
            receipt.proof = ReceiptProof(index: index, size: receipts.count, path: tree.paths[index].map { Hex.string($0) })
            return receipt
        }
    }

    /// Whether `receipt`'s signature is ours (or a trusted earlier key's), in either form.
    func isValid(_ receipt: ConsentReceipt) -> Bool {
        guard let proof = receipt.proof else { return isValid(signature: receipt.signature, for: receipt.signedText) }
        guard let root = ReceiptTree.root(of: receipt) else { return false }
        return isValid(signature: receipt.signature, for: ReceiptProof.signedRootText(rootHex: Hex.string(root), size: proof.size))
    }

    /// The text a checkpoint signature covers.
    static func checkpointText(chain: Int, position: Int64, headHash: [UInt8], milliseconds: Int64) -> String {
        ["recruiting-compass-checkpoint-v1", String(chain), String(position), Hex.string(headHash), String(milliseconds)]
            .joined(separator: "\n")
    }
}
