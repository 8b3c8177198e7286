import Contracts
import Crypto
import Hex

/// The Merkle tree of RFC 6962 (section 2.1) over a batch's receipts, so one Ed25519 signature of
/// its root stands for every receipt in it: a leaf is SHA-256(0x00 ‖ leaf bytes), a node
/// SHA-256(0x01 ‖ left ‖ right), and a tree of n > 1 leaves splits after the largest power of two
/// below n. Pure: no key, no I/O.
enum ReceiptTree {
    typealias Hash = [UInt8]

    static func leafHash(_ bytes: [UInt8]) -> Hash {
        var hasher = SHA256()
        hasher.update(data: [0x00])
        hasher.update(data: bytes)
        return Array(hasher.finalize())
    }

    /// The leaf hash of `receipt`: of its signed text.
    static func leafHash(of receipt: ConsentReceipt) -> Hash {
        var text: [UInt8] = []
        receipt.appendSignedText(to: &text)
        return leafHash(text)
    }

    static func nodeHash(_ left: Hash, _ right: Hash) -> Hash {
        var hasher = SHA256()
        hasher.update(data: [0x01])
        hasher.update(data: left)
        hasher.update(data: right)
        return Array(hasher.finalize())
    }

    /// The root over `leaves` (leaf hashes, at least one) and each leaf's inclusion path, sibling
    /// hashes from the leaf up.
    static func build(_ leaves: [Hash]) -> (root: Hash, paths: [[Hash]]) {
        precondition(!leaves.isEmpty, "a tree has at least one leaf")
        var paths = [[Hash]](repeating: [], count: leaves.count)
        let root = subtree(leaves[...], paths: &paths)
        return (root, paths)
    }

    private static func subtree(_ leaves: ArraySlice<Hash>, paths: inout [[Hash]]) -> Hash {
        guard leaves.count > 1 else { return leaves.first! }
        let split = leaves.startIndex + largestPowerOfTwo(below: leaves.count)
        let left = subtree(leaves[..<split], paths: &paths)
        let right = subtree(leaves[split...], paths: &paths)
        // The children's own levels were appended first, so each path runs from the leaf up.
        for index in leaves.startIndex..<split { paths[index].append(right) }
        for index in split..<leaves.endIndex { paths[index].append(left) }
        return nodeHash(left, right)
    }

    private static func largestPowerOfTwo(below count: Int) -> Int {
        var power = 1
        while power << 1 < count { power <<= 1 }
        return power
    }

    /// The root that `leaf` at `index` of a tree of `size` leaves and `path` prove (RFC 9162,
    /// section 2.1.3.2), or nil when the path cannot belong to such a tree (too short, too long,
    /// an index out of range).
    static func root(leaf: Hash, index: Int, size: Int, path: [Hash]) -> Hash? {
        guard index >= 0, index < size else { return nil }
        var fn = index
        var sn = size - 1
        var hash = leaf
        for sibling in path {
            guard sn != 0 else { return nil }
            if fn & 1 == 1 || fn == sn {
                hash = nodeHash(sibling, hash)
                // A right edge with no sibling at these levels: climb to where it has one.
                while fn & 1 == 0 && fn != 0 {
                    fn >>= 1
                    sn >>= 1
                }
            } else {
                hash = nodeHash(hash, sibling)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 ? hash : nil
    }

    /// The root `receipt`'s proof leads to, from its signed text; nil without a proof or with one
    /// that is malformed.
    static func root(of receipt: ConsentReceipt) -> Hash? {
        guard let proof = receipt.proof, proof.path.count <= 64 else { return nil }
        var path: [Hash] = []
        path.reserveCapacity(proof.path.count)
        for text in proof.path {
            guard let hash = Hex.bytes(text), hash.count == 32 else { return nil }
            path.append(hash)
        }
        return root(leaf: leafHash(of: receipt), index: proof.index, size: proof.size, path: path)
    }
}
