import Bus
import Contracts
import Crypto
import Foundation
import Hex
import Testing

@testable import AuditService

/// The Merkle tree that lets one signature stand for a batch of receipts: RFC 6962's roots and
/// inclusion paths (the test vectors of the Certificate Transparency implementations), every
/// path of every tree up to 33 leaves proving its leaf and nothing else, and signed batches that
/// verify while any edit, swap or foreign key does not.
@Suite struct ReceiptTreeTests {
    /// RFC 6962's test leaves and the roots of their first 1…8.
    static let leaves: [[UInt8]] = [
        [], [0x00], [0x10], [0x20, 0x21], [0x30, 0x31], [0x40, 0x41, 0x42, 0x43], Array(0x50...0x57), Array(0x60...0x6f),
    ]
    static let roots = [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ]

    @Test("roots match RFC 6962's test vectors for 1 to 8 leaves")
    func rootsMatchTheVectors() {
        for size in 1...8 {
            let tree = ReceiptTree.build(Self.leaves[..<size].map { ReceiptTree.leafHash($0) })
            #expect(Hex.string(tree.root) == Self.roots[size - 1], "size \(size)")
        }
    }

    @Test(
        "inclusion paths match the vectors",
        arguments: [
            (
                0, 8,
                [
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ]
            ),
            (
                5, 8,
                [
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ]
            ),
            (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
            (4, 5, ["d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
            (0, 1, []),
        ])
    func pathsMatchTheVectors(index: Int, size: Int, path: [String]) {
        let tree = ReceiptTree.build(Self.leaves[..<size].map { ReceiptTree.leafHash($0) })
        #expect(tree.paths[index].map { Hex.string($0) } == path)
    }

    /// (A path alone may fit a larger tree too: the size is bound by the signature, whose text
    /// names it; `tamperedReceiptsFail` changes it.)
    @Test("every path proves its own leaf, and no other leaf or index")
    func everyPathProvesOnlyItsLeaf() {
        for size in 1...33 {
            let leaves = (0..<size).map { ReceiptTree.leafHash(Array("leaf \($0)".utf8)) }
            let tree = ReceiptTree.build(leaves)
            for index in 0..<size {
                let path = tree.paths[index]
                #expect(ReceiptTree.root(leaf: leaves[index], index: index, size: size, path: path) == tree.root)
                let other = leaves[(index + 1) % size]
                if size > 1 { #expect(ReceiptTree.root(leaf: other, index: index, size: size, path: path) != tree.root) }
                for wrongIndex in [index - 1, index + 1] where wrongIndex != index {
                    #expect(ReceiptTree.root(leaf: leaves[index], index: wrongIndex, size: size, path: path) != tree.root)
                }
                if !path.isEmpty {
                    #expect(ReceiptTree.root(leaf: leaves[index], index: index, size: size, path: path.dropLast()) != tree.root)
                    var flipped = path
                    flipped[0][0] ^= 1
                    #expect(ReceiptTree.root(leaf: leaves[index], index: index, size: size, path: flipped) != tree.root)
                }
                #expect(ReceiptTree.root(leaf: leaves[index], index: index, size: size, path: path + [leaves[0]]) == nil)
            }
        }
        #expect(ReceiptTree.root(leaf: [], index: 3, size: 3, path: []) == nil)
        #expect(ReceiptTree.root(leaf: [], index: -1, size: 3, path: []) == nil)
    }

    static func receipts(_ count: Int) -> [ConsentReceipt] {
        (0..<count).map { number in
            ConsentReceipt(
                recordId: UUID(), documentType: .termsOfService, version: "1.\(number)", digest: "d", action: .accept,
                recordedAt: Date(timeIntervalSince1970: 1_760_000_000.5), chain: 0, position: Int64(number + 1),
                hash: String(repeating: "ab", count: 32), signature: "")
        }
    }

    @Test("receipts signed together share one signature, and each verifies on its own", arguments: [1, 2, 7, 64])
    func signedTogetherVerifyAlone(count: Int) {
        let signer = ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey())
        let signed = signer.signedTogether(Self.receipts(count))
        #expect(Set(signed.map(\.signature)).count == 1)
        for receipt in signed {
            #expect(receipt.proof?.size == count)
            #expect(signer.isValid(receipt))
            // Offline, as anyone holding the public key checks it: the root from the proof, the
            // signature over the root's text.
            let root = ReceiptTree.root(of: receipt)!
            let text = ReceiptProof.signedRootText(rootHex: Hex.string(root), size: count)
            #expect(signer.key.publicKey.isValidSignature(Data(base64Encoded: receipt.signature)!, for: Data(text.utf8)))
        }
        // A rotated-out key still verifies when listed as previous; a stranger's does not.
        let rotated = ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey(), previousPublicKeys: [signer.key.publicKey])
        #expect(signed.allSatisfy(rotated.isValid))
        #expect(!signed.contains(where: ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey()).isValid))
    }

    @Test("an edited field, a borrowed proof, a malformed proof or a dropped proof fails")
    func tamperedReceiptsFail() throws {
        let signer = ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey())
        let signed = signer.signedTogether(Self.receipts(5))
        var edited = signed[2]
        edited.version = "9.9"
        #expect(!signer.isValid(edited))
        var borrowed = signed[2]
        borrowed.proof = signed[3].proof
        #expect(!signer.isValid(borrowed))
        var resized = signed[2]
        resized.proof?.size = 6
        #expect(!signer.isValid(resized))
        for path in [["zz"], [String(repeating: "AB", count: 32)], [String(repeating: "ab", count: 31)]] {
            var malformed = signed[2]
            malformed.proof?.path = path
            #expect(!signer.isValid(malformed))
        }
        var dropped = signed[2]
        dropped.proof = nil
        #expect(!signer.isValid(dropped))
        // A receipt signed on its own verifies, and does not once given a proof.
        let alone = signer.signed(Self.receipts(1)[0])
        #expect(alone.proof == nil && signer.isValid(alone))
        var dressed = alone
        dressed.proof = ReceiptProof(index: 0, size: 1, path: [])
        #expect(!signer.isValid(dressed))
    }

    @Test("the signed text is the fields one per line, as offline checkers rebuild it")
    func signedTextIsTheFieldsOnePerLine() throws {
        let receipt = ConsentReceipt(
            recordId: try #require(UUID(uuidString: "0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B")), documentType: .privacyPolicy,
            version: "2025-12-12", digest: "d1", action: .acknowledge, recordedAt: Date(timeIntervalSince1970: 1_760_000_000.5),
            chain: 3, position: 12_345, hash: "ab12", signature: "ignored")
        #expect(
            receipt.signedText
                == "recruiting-compass-receipt-v1\n0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b\nprivacy_policy\n2025-12-12\nd1\nacknowledge\n"
                + "2025-10-09T08:53:20.500Z\n3\n12345\nab12")
    }

    @Test("a receipt without a proof encodes as before; one with a proof round-trips")
    func receiptCoding() throws {
        let signer = ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey())
        let alone = signer.signed(Self.receipts(1)[0])
        let aloneJSON = String(decoding: try JSONEncoder().encode(alone), as: UTF8.self)
        #expect(!aloneJSON.contains("proof"))
        let together = signer.signedTogether(Self.receipts(3))[1]
        let decoded = try BusJSON.decode(ConsentReceipt.self, from: try BusJSON.encode(together))
        #expect(decoded == together && signer.isValid(decoded))
    }
}
