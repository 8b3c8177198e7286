import Bus
import Foundation
import Identity

/// A keys file (`compass keys generate`'s output) as its lines, so a rotation changes the values
/// it must and leaves every other line, comment and order as the operator has them.
struct EnvFile {
    private(set) var lines: [String]

    init(_ text: String) { lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    var text: String {
        let joined = lines.joined(separator: "\n")
        return joined.hasSuffix("\n") ? joined : joined + "\n"
    }

    /// The last value given to `name` (as a shell would read the file), nil when absent or empty.
    subscript(name: String) -> String? {
        let value = lines.last { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
        return value?.isEmpty == false ? value : nil
    }

    /// Sets `name`: its last line replaced (earlier duplicates dropped), else a line added with `comment` above it.
    mutating func set(_ name: String, _ value: String, comment: String? = nil) {
        if let last = lines.lastIndex(where: { $0.hasPrefix(name + "=") }) {
            lines[last] = "\(name)=\(value)"
            lines = lines.enumerated().filter { $0.offset == last || !$0.element.hasPrefix(name + "=") }.map(\.element)
            return
        }
        if lines.last == "" { lines.removeLast() }
        if let comment { lines.append("# \(comment)") }
        lines.append("\(name)=\(value)")
    }
}

/// What `compass keys rotate NAME` does to a keys file, as a pure function of the file, the
/// clock and fresh randomness: the new key in place, and whatever lets what the old key made keep
/// working through the overlap (its public key among the previous ones, or the old key kept
/// second). `finish` ends an overlap that can end (`--finish`).
enum KeyRotation {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The names `rotate` takes, with what each does.
    static let names: [(name: String, what: String)] = [
        ("AUDIT_SIGNING_KEY", "new seed; the old public key appended to AUDIT_PREVIOUS_PUBLIC_KEYS (receipts keep verifying)"),
        ("ACCOUNTS_SESSION_SIGNING_KEY", "new key and id; the old kid=public key appended to ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS"),
        ("ACCOUNTS_CERTIFICATE_SIGNING_KEY", "new key and id; the old kid=public key appended to ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS"),
        ("GATEWAY_FILE_URL_KEYS", "a new key first, the old ones kept to verify links already given; --finish keeps only the first"),
        ("ACCOUNTS_APPLE_TOKEN_KEYS", "a new seal key first, the old kept to open tokens until Accounts reseals them; --finish keeps only the first"),
        ("OPERATOR", "a new operator key pair; BUS_ADMITTED_KEYS admits the new and the old; --finish admits only the new"),
        ("GATEWAY", "the gateway's key pair, the same way as OPERATOR"),
    ]

    static func rotate(_ name: String, in file: inout EnvFile, finish: Bool, now: Date) throws {
        let day = dayStamp(now)
        switch name {
        case "AUDIT_SIGNING_KEY":
            try refuseFinish(finish, name, "receipts signed with an earlier key verify only while its public key stays listed")
            let old = try required(name, in: file)
            file.set(name, Data(random(32)).base64EncodedString())
            file.set(
                "AUDIT_PREVIOUS_PUBLIC_KEYS", appending(try publicKey(ofSeed: old, name), to: file["AUDIT_PREVIOUS_PUBLIC_KEYS"]),
                comment: "Public keys of Audit's earlier signing keys: receipts they signed still verify.")
        case "ACCOUNTS_SESSION_SIGNING_KEY":
            try refuseFinish(finish, name, "drop ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS by hand once ACCOUNTS_SESSION_LIFETIME has passed")
            let old = try signingKey(try required(name, in: file), name, defaultID: file["ACCOUNTS_SESSION_KEY_ID"] ?? "s1")
            try rotateSigned(
                name, previous: "ACCOUNTS_SESSION_PREVIOUS_PUBLIC_KEYS", old: old, newID: "s-\(day)", in: &file,
                comment: "Public keys of earlier session signing keys: their tokens stay valid until they expire.")
        case "ACCOUNTS_CERTIFICATE_SIGNING_KEY":
            try refuseFinish(finish, name, "deletion certificates signed with an earlier key verify only while its public key stays listed")
            // Without a certificate key of its own, Accounts signed certificates with the session key.
            let old =
                try file[name].map { try signingKey($0, name, defaultID: nil) }
                ?? signingKey(try required("ACCOUNTS_SESSION_SIGNING_KEY", in: file), name, defaultID: file["ACCOUNTS_SESSION_KEY_ID"] ?? "s1")
            try rotateSigned(
                name, previous: "ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS", old: old, newID: "cert-\(day)", in: &file,
                comment: "Public keys of earlier deletion-certificate keys: certificates they signed still verify.")
        case "GATEWAY_FILE_URL_KEYS":
            let keys = list(try required(name, in: file))
            file.set(name, finish ? keys[0] : ([randomBase64URL(32)] + keys).joined(separator: ","))
        case "ACCOUNTS_APPLE_TOKEN_KEYS":
            let keys = list(try required(name, in: file))
            let ids = Set(keys.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
            file.set(
                name,
                finish ? keys[0] : (["\(unique("a-\(day)", among: ids))=\(Data(random(32)).base64EncodedString())"] + keys).joined(separator: ","))
        case "OPERATOR", "GATEWAY":
            try rotateClientPair(name.lowercased(), in: &file, finish: finish)
        case "LEGAL", "ACCOUNTS", "DOCUMENTS", "AUDIT":
            throw Refusal(
                "\(name)'s key pair is also the server key its callers pin (\(name)_PUBLIC_KEY): it cannot be rotated without restarting every process at once (deploy/OPERATIONS.md, \"Key rotation\")"
            )
        default:
            throw Refusal("unknown key \(name): one of \(names.map(\.name).joined(separator: ", "))")
        }
    }

    /// A new signing key under a new id, the old one's `kid=<public key>` kept among `previous`.
    private static func rotateSigned(
        _ name: String, previous: String, old: SessionSigningKey, newID: String, in file: inout EnvFile, comment: String
    ) throws {
        let listed = Set(list(file[previous] ?? "").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        let id = unique(newID, among: listed.union([old.id]))
        file.set(name, "\(id)=\(Data(random(32)).base64EncodedString())")
        let oldPublic = old.publicKey.rawRepresentation.base64EncodedString()
        file.set(previous, appending("\(old.id)=\(oldPublic)", to: file[previous]), comment: comment)
    }

    /// A client-only CURVE identity: the new pair in place, both public keys admitted until `finish`.
    private static func rotateClientPair(_ peer: String, in file: inout EnvFile, finish: Bool) throws {
        let upper = peer.uppercased()
        let admitted = list(try required("BUS_ADMITTED_KEYS", in: file))
        let current = try required("\(upper)_PUBLIC_KEY", in: file)
        if finish {
            file.set("BUS_ADMITTED_KEYS", admitted.filter { !$0.hasPrefix("\(peer)=") || $0 == "\(peer)=\(current)" }.joined(separator: ","))
            return
        }
        let pair = try Keys.Generate.envFileSafeKeyPair()
        file.set("\(upper)_PUBLIC_KEY", pair.publicKey)
        file.set("\(upper)_SECRET_KEY", pair.secretKey)
        file.set("BUS_ADMITTED_KEYS", (admitted + ["\(peer)=\(pair.publicKey)"]).joined(separator: ","))
    }

    private static func refuseFinish(_ finish: Bool, _ name: String, _ why: String) throws {
        if finish { throw Refusal("\(name) has no overlap to finish: \(why)") }
    }

    private static func required(_ name: String, in file: EnvFile) throws -> String {
        guard let value = file[name] else { throw Refusal("the keys file has no \(name) to rotate") }
        return value
    }

    /// The key a setting holds, read as Accounts reads it: Identity's `kid=<base64 seed>`, or (with a
    /// `defaultID`) a bare base64 seed under that id.
    private static func signingKey(_ value: String, _ name: String, defaultID: String?) throws -> SessionSigningKey {
        let bare = Data(base64Encoded: value).map { $0.count == 32 } ?? false
        let configuration = bare ? defaultID.map { "\($0)=\(value)" } ?? value : value
        guard let set = try? SessionKeySet(currentConfiguration: configuration) else {
            throw Refusal("\(name) is not \(defaultID == nil ? "kid=<base64 32-byte seed>" : "a base64 32-byte seed or kid=<seed>")")
        }
        return set.current
    }

    /// Audit's key: a bare seed (its public key goes into the previous list without an id).
    private static func publicKey(ofSeed seed: String, _ name: String) throws -> String {
        try signingKey(seed, name, defaultID: "audit").publicKey.rawRepresentation.base64EncodedString()
    }

    private static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    private static func appending(_ item: String, to value: String?) -> String {
        (list(value ?? "") + [item]).joined(separator: ",")
    }

    /// `base`, or `base-2`, `base-3`… the first not in `ids`.
    private static func unique(_ base: String, among ids: Set<String>) -> String {
        var candidate = base
        var n = 1
        while ids.contains(candidate) {
            n += 1
            candidate = "\(base)-\(n)"
        }
        return candidate
    }

    /// `YYYYMMDD` in UTC: the day a key was made, in its id.
    static func dayStamp(_ now: Date) -> String {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "UTC")
        format.dateFormat = "yyyyMMdd"
        return format.string(from: now)
    }

    private static func random(_ count: Int) -> [UInt8] { Keys.Generate.randomBytes(count) }
    private static func randomBase64URL(_ count: Int) -> String { Keys.Generate.randomBase64URL(bytes: count) }
}
