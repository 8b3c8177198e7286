import Foundation

/// The buffer and open containers of one ``FastJSONEncoder`` run. Values are appended as they
/// are encoded; containers nest as a stack (`frames`). Writing to a container closes every
/// container opened inside it; writing to a container already closed falls back, since the
/// bytes after it are already written. Borrowed by one synchronous encode at a time; each thread
/// keeps one for reuse (``borrow()``).
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
        /// The key needed no escapes: its UTF-8 is in the buffer between `start + 1` and the
        /// closing quote, and sorting compares those bytes directly.
        let clean: Bool
        let length: Int
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
        storage.pointee.frames.reserveCapacity(8)
        storage.pointee.keys.reserveCapacity(16)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    // MARK: Reuse

    private static let perThread = ThreadLocal { FastJSONEncoderState() }
    /// Whether an encode on this thread holds this state (an `encode(to:)` that itself encodes a
    /// payload gets a fresh one).
    private var inUse = false
    /// The offset where the value being encoded began; what precedes it is the caller's.
    private(set) var base = 0

    /// This thread's state, or a fresh one when it is already in use further up the stack.
    static func borrow() -> FastJSONEncoderState {
        let state = perThread.value
        if state.inUse { return FastJSONEncoderState() }
        state.inUse = true
        return state
    }

    func giveBack() { inUse = false }

    /// Moves `buffer` in as the bytes to append to (no copy).
    func begin(in buffer: inout [UInt8]) {
        swap(&bytes, &buffer)
        base = bytes.count
        storage.pointee.failed = false
    }

    /// Moves the bytes back out to `buffer`, without the value's when it did not encode, and
    /// clears everything else for the next value. Buffers grown by a large value are let go.
    func end(in buffer: inout [UInt8], keepingFrom base: Int, ok: Bool) {
        if !ok { bytes.removeSubrange(base...) }
        swap(&bytes, &buffer)
        bytes.removeAll(keepingCapacity: false)
        frames.removeAll(keepingCapacity: frames.capacity <= 64)
        keys.removeAll(keepingCapacity: keys.capacity <= 256)
        if scratch.capacity > 64 << 10 { scratch = [] }
        storage.pointee.failed = false
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
        if T.self == String.self {
            append(value as! String)
            return
        }
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
        if T.self == Data.self {
            append((value as! Data).base64EncodedString())
            return
        }  // Foundation's default
        if T.self == URL.self {
            append((value as! URL).absoluteString)
            return
        }
        if T.self == Decimal.self { throw fallback() }
        let depth = frames.count
        let mark = bytes.count
        try value.encode(to: FastJSONEncoder(state: self, depth: depth, mark: mark, owner: newToken()))
        if failed { throw FastJSONFallback() }
        close(downTo: depth)
        // A value that encoded nothing is `{}` to Foundation, except at the top, where it is an
        // error: left empty here, so the caller falls back.
        if bytes.count == mark, mark > base { appendASCII("{}") }
    }

    // MARK: Containers

    /// Opens this value's container, or returns the one it opened before (Foundation merges a
    /// second `container(keyedBy:)` into the first). `(-1, -1)` after a fallback.
    func openContainer(object: Bool, depth: Int, mark: Int, owner: Int) -> (index: Int, token: Int) {
        if failed { return (-1, -1) }
        if depth < frames.count, frames[depth].owner == owner {
            guard frames[depth].object == object else {
                fail()
                return (-1, -1)
            }
            close(downTo: depth + 1)
            return (depth, frames[depth].token)
        }
        guard frames.count == depth, bytes.count == mark, depth < Self.maximumDepth else {
            fail()
            return (-1, -1)
        }
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
        let (ascii, clean) = appendString(key)
        keys.append(Member(key: key, start: start, ascii: ascii, clean: clean, length: bytes.count - start - 2))
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
        guard !failed, index >= 0, index < frames.count, frames[index].token == token else {
            fail()
            return 0
        }
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
    ///
    /// Keys written without escapes (all but the oddest) are compared where they lie in the
    /// buffer, with `memcmp`, and sorted by insertion into a stack array of indices: this ran on
    /// every object of every payload and was a third of an encode with `String` comparisons and
    /// `sorted`.
    private func sortMembers(of frame: FastJSONEncoderState.Frame) {
        let base = frame.memberBase
        let count = keys.count - base
        var clean = true
        var ascii = true
        for i in base..<keys.count {
            clean = clean && keys[i].clean
            ascii = ascii && keys[i].ascii
        }
        guard clean, count <= 64 else { return sortMembersByString(of: frame) }
        if !ascii {
            // Non-ASCII keys can be equal as `String`s with different bytes: compare them all.
            for i in base..<keys.count {
                for j in (i + 1)..<keys.count where keys[i].key == keys[j].key { return fail() }
            }
        }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { order in
            let ordered = bytes.withUnsafeBufferPointer { buffer -> Bool in
                func compare(_ a: Int, _ b: Int) -> Int32 {
                    let (x, y) = (keys[base + a], keys[base + b])
                    let shared = min(x.length, y.length)
                    let result = memcmp(buffer.baseAddress! + x.start + 1, buffer.baseAddress! + y.start + 1, shared)
                    if result != 0 || x.length == y.length { return result }
                    return x.length < y.length ? -1 : 1
                }
                var inOrder = true
                for i in 0..<count {
                    var j = i
                    while j > 0 {
                        let result = compare(order[j - 1], i)
                        if result == 0 { return false }
                        if result < 0 { break }
                        order[j] = order[j - 1]
                        j -= 1
                        inOrder = false
                    }
                    order[j] = i
                }
                if inOrder { order[0] = -1 }
                return true
            }
            guard ordered else { return fail() }
            if order[0] == -1 { return }
            rearrange(frame, order: UnsafeBufferPointer(order))
        }
    }

    /// Writes the members of `frame` again in `order` (indices into its members).
    private func rearrange(_ frame: FastJSONEncoderState.Frame, order: UnsafeBufferPointer<Int>) {
        let base = frame.memberBase
        scratch.removeAll(keepingCapacity: true)
        for (position, i) in order.enumerated() {
            if position > 0 { scratch.append(UInt8(ascii: ",")) }
            let end = base + i + 1 < keys.count ? keys[base + i + 1].start - 1 : bytes.count
            scratch.append(contentsOf: bytes[keys[base + i].start..<end])
        }
        bytes.replaceSubrange((frame.start + 1)..., with: scratch)
    }

    /// The general case: keys compared as `String`s' UTF-8 (escaped keys, huge objects).
    private func sortMembersByString(of frame: FastJSONEncoderState.Frame) {
        let members = keys[frame.memberBase...]
        var inOrder = true
        var ascii = true
        for i in members.indices.dropFirst() where !members[i - 1].key.utf8.lexicographicallyPrecedes(members[i].key.utf8) {
            inOrder = false
        }
        for member in members where !member.ascii { ascii = false }
        if !ascii {
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
        order.map { $0 - frame.memberBase }.withUnsafeBufferPointer { rearrange(frame, order: $0) }
    }
}
