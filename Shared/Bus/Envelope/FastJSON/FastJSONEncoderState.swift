import Foundation

/// The buffer and open containers of one ``FastJSONEncoder`` run. Values are appended as they
/// are encoded; containers nest as a stack (`frames`). Writing to a container closes every
/// container opened inside it; writing to a container already closed falls back, since the
/// bytes after it are already written. Confined to one synchronous encode: never shared.
final class FastJSONEncoderState {
    /// An open object or array.
    struct Frame {
        /// Identifies this container to the handles (``FastJSONEncoder/KeyedContainer``) that write to it.
        let token: Int
        let object: Bool
        /// The offset of its `{` or `[`.
        let start: Int
        /// Where its members begin in ``keys``.
        let memberBase: Int
        /// The value (``FastJSONEncoder/owner``) that opened it.
        let owner: Int
        var count = 0
    }

    /// A member of an open object: its key and the offset of the key's opening quote.
    struct Member {
        let key: String
        let start: Int
        let ascii: Bool
    }

    /// Foundation refuses nesting deeper than 512; far beyond any payload, so leave it to Foundation.
    static let maximumDepth = 256

    /// The mutable fields, kept behind a pointer: a class's stored `var`s get dynamic
    /// exclusivity checks on every access (`swift_beginAccess`, a thread-local lookup), and with
    /// several appends per value those checks cost as much as Foundation's whole encoder. The
    /// allocation lives exactly as long as this object, which every container holds.
    struct Storage {
        var bytes: [UInt8] = []
        var frames: [Frame] = []
        var keys: [Member] = []
        var failed = false
        var lastToken = 0
        var scratch: [UInt8] = []
    }

    private let storage: UnsafeMutablePointer<Storage>

    init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: Storage())
        storage.pointee.bytes.reserveCapacity(256)
        storage.pointee.frames.reserveCapacity(8)
        storage.pointee.keys.reserveCapacity(16)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    var bytes: [UInt8] {
        unsafeAddress { UnsafePointer(storage).pointer(to: \.bytes)! }
        unsafeMutableAddress { storage.pointer(to: \.bytes)! }
    }
    var frames: [Frame] {
        unsafeAddress { UnsafePointer(storage).pointer(to: \.frames)! }
        unsafeMutableAddress { storage.pointer(to: \.frames)! }
    }
    var keys: [Member] {
        unsafeAddress { UnsafePointer(storage).pointer(to: \.keys)! }
        unsafeMutableAddress { storage.pointer(to: \.keys)! }
    }
    private var scratch: [UInt8] {
        unsafeAddress { UnsafePointer(storage).pointer(to: \.scratch)! }
        unsafeMutableAddress { storage.pointer(to: \.scratch)! }
    }
    /// Set by anything this encoder cannot reproduce; the run is then redone by Foundation even
    /// if the type caught the error and went on.
    var failed: Bool { storage.pointee.failed }

    func fail() { storage.pointee.failed = true }

    func fallback() -> FastJSONFallback {
        fail()
        return FastJSONFallback()
    }

    func newToken() -> Int {
        storage.pointee.lastToken += 1
        return storage.pointee.lastToken
    }

    // MARK: Values

    /// Appends `value`: the types Foundation's encoder treats specially (and the common scalars,
    /// to skip their `encode(to:)`) directly, anything else through its `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if failed { throw FastJSONFallback() }
        if T.self == String.self { append(value as! String); return }
        if T.self == Int.self { return append(Int64(value as! Int)) }
        if T.self == Int64.self { return append(value as! Int64) }
        if T.self == Bool.self { return append(value as! Bool) }
        if T.self == Double.self { return try append(value as! Double) }
        if T.self == UUID.self { return append(uuid: value as! UUID) }
        if T.self == Date.self {
            // BusJSON's strategy writes `Timestamp.format(date)` as a string; it never needs escapes.
            bytes.append(UInt8(ascii: "\""))
            Timestamp.append(value as! Date, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        if T.self == Data.self { append((value as! Data).base64EncodedString()); return }  // Foundation's default
        if T.self == URL.self { append((value as! URL).absoluteString); return }
        if T.self == Decimal.self { throw fallback() }
        let depth = frames.count
        let mark = bytes.count
        try value.encode(to: FastJSONEncoder(state: self, depth: depth, mark: mark, owner: newToken()))
        if failed { throw FastJSONFallback() }
        close(downTo: depth)
        // A value that encoded nothing is `{}` to Foundation, except at the top, where it is an
        // error: left empty here, so the caller falls back.
        if bytes.count == mark, mark > 0 { appendASCII("{}") }
    }

    // MARK: Containers

    /// Opens this value's container, or returns the one it opened before (Foundation merges a
    /// second `container(keyedBy:)` into the first). `(-1, -1)` after a fallback.
    func openContainer(object: Bool, depth: Int, mark: Int, owner: Int) -> (index: Int, token: Int) {
        if failed { return (-1, -1) }
        if depth < frames.count, frames[depth].owner == owner {
            guard frames[depth].object == object else { fail(); return (-1, -1) }
            close(downTo: depth + 1)
            return (depth, frames[depth].token)
        }
        guard frames.count == depth, bytes.count == mark, depth < Self.maximumDepth else { fail(); return (-1, -1) }
        let token = newToken()
        frames.append(Frame(token: token, object: object, start: bytes.count, memberBase: keys.count, owner: owner))
        bytes.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
        return (depth, token)
    }

    /// Starts a member of the object at `index`: closes what was opened inside it since, and
    /// writes the separator and `"key":`.
    func beginMember(_ index: Int, _ token: Int, key: String) throws(FastJSONFallback) {
        try reopen(index, token, object: true)
        if frames[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count += 1
        let start = bytes.count
        let ascii = append(key)
        keys.append(Member(key: key, start: start, ascii: ascii))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts an element of the array at `index`.
    func beginElement(_ index: Int, _ token: Int) throws(FastJSONFallback) {
        try reopen(index, token, object: false)
        if frames[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        frames[index].count += 1
    }

    /// The element count of the array at `index`, if it is still open.
    func count(_ index: Int, _ token: Int) -> Int {
        guard !failed, index >= 0, index < frames.count, frames[index].token == token else { fail(); return 0 }
        return frames[index].count
    }

    private func reopen(_ index: Int, _ token: Int, object: Bool) throws(FastJSONFallback) {
        guard !failed, index >= 0, index < frames.count, frames[index].token == token, frames[index].object == object
        else { throw fallback() }
        close(downTo: index + 1)
    }

    func close(downTo depth: Int) {
        while frames.count > depth {
            let frame = frames.removeLast()
            if !frame.object {
                bytes.append(UInt8(ascii: "]"))
                continue
            }
            if frame.count > 1 { sortMembers(of: frame) }
            keys.removeSubrange(frame.memberBase...)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Puts the members of `frame` (the last bytes of the buffer) in the order of their keys'
    /// UTF-8 bytes, as Foundation's `.sortedKeys` does. Two equal keys fall back: Foundation
    /// keeps the last (its object is a dictionary, where canonically equivalent keys collide too).
    private func sortMembers(of frame: FastJSONEncoderState.Frame) {
        let members = keys[frame.memberBase...]
        var inOrder = true
        var ascii = true
        for i in members.indices.dropFirst() where !members[i - 1].key.utf8.lexicographicallyPrecedes(members[i].key.utf8) {
            inOrder = false
        }
        for member in members where !member.ascii { ascii = false }
        if !ascii {
            // Non-ASCII keys can be equal as `String`s with different bytes: compare them all.
            guard members.count <= 64 else { return fail() }
            for i in members.indices {
                for j in members.indices where j > i && members[i].key == members[j].key { return fail() }
            }
        }
        if inOrder { return }
        let order = members.indices.sorted { members[$0].key.utf8.lexicographicallyPrecedes(members[$1].key.utf8) }
        for (a, b) in zip(order, order.dropFirst()) where members[a].key.utf8.elementsEqual(members[b].key.utf8) {
            return fail()
        }
        scratch.removeAll(keepingCapacity: true)
        for (position, i) in order.enumerated() {
            if position > 0 { scratch.append(UInt8(ascii: ",")) }
            let end = i + 1 < members.endIndex ? members[i + 1].start - 1 : bytes.count
            scratch.append(contentsOf: bytes[members[i].start..<end])
        }
        bytes.replaceSubrange((frame.start + 1)..., with: scratch)
    }
}
