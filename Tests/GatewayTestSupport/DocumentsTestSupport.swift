import Crypto
import Foundation
import TestSupport

/// What the documents tests share: a signed-up user's headers, random bytes, and a tus upload
/// done the way a tus client does it (creation, then PATCHes at the committed offset).
extension GatewayHarness {
    public struct User: Sendable {
        public let id: String
        public let token: String
        public init(id: String, token: String) {
            self.id = id
            self.token = token
        }
        public var auth: [String: String] { HTTPClient.bearer(token) }
        public var tus: [String: String] { auth.merging(["Tus-Resumable": "1.0.0"]) { _, new in new } }
    }

    public func user() async throws -> User {
        let (id, token, _) = try await signedUpUser()
        return User(id: id, token: token)
    }

    public static func randomBytes(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            var index = 0
            while index < count {
                var word = generator.next()
                let n = min(8, count - index)
                withUnsafeBytes(of: &word) { raw.baseAddress!.advanced(by: index).copyMemory(from: $0.baseAddress!, byteCount: n) }
                index += n
            }
        }
        return data
    }

    public static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    public static func metadata(_ pairs: [String: String]) -> String {
        pairs.sorted { $0.key < $1.key }.map { "\($0.key) \(Data($0.value.utf8).base64EncodedString())" }.joined(separator: ",")
    }

    /// tus creation; the upload's path (`Location`).
    public func tusCreate(
        _ user: User, length: Int, type: String = "transcript", fileType: String = "application/octet-stream", fileName: String = "file.bin"
    ) async throws -> String {
        let reply = try await http.send(
            "POST", "/api/uploads",
            headers: user.tus.merging([
                "Upload-Length": String(length),
                "Upload-Metadata": Self.metadata(["type": type, "filetype": fileType, "filename": fileName, "title": "Test " + fileName]),
            ]) { _, new in new })
        guard reply.status == 201, let location = reply.header("Location") else {
            throw TestSupportError("tus creation answered \(reply.status): \(reply.text)")
        }
        return location
    }

    public func tusPatch(_ user: User, _ location: String, offset: Int, _ bytes: Data) async throws -> HTTPReply {
        try await http.send(
            "PATCH", location, body: bytes,
            headers: user.tus.merging(["Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream"]) { _, new in new })
    }

    /// A complete upload of `bytes` in PATCHes of `patchSize`; the document's id.
    public func upload(
        _ bytes: Data, as user: User, type: String = "transcript", fileType: String = "application/octet-stream", fileName: String = "file.bin",
        patchSize: Int = 1 << 20
    ) async throws -> String {
        let location = try await tusCreate(user, length: bytes.count, type: type, fileType: fileType, fileName: fileName)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + patchSize)
            let reply = try await tusPatch(user, location, offset: offset, bytes.subdata(in: offset..<end))
            guard reply.status == 204, reply.header("Upload-Offset") == String(end) else {
                throw TestSupportError("PATCH answered \(reply.status) \(reply.headers): \(reply.text)")
            }
            offset = end
        }
        return String(location.split(separator: "/").last!)
    }

    /// `documents/<id>/<name>`: the stored form inside an absolute `file_url`
    /// (`…/storage/v1/object/sign/documents/<id>/<name>?token=…`).
    public static func storedFileUrl(_ fileUrl: String) -> String {
        guard let start = fileUrl.range(of: "documents/") else { return fileUrl }
        let tail = fileUrl[start.lowerBound...]
        return String(tail.prefix { $0 != "?" })
    }

    /// Peak resident memory of one executable (`VmHWM`), in bytes.
    public func peakMemory(of name: String) throws -> Int {
        guard let pid = pid(of: name) else { throw TestSupportError("\(name) is not running") }
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { throw TestSupportError("no VmHWM for \(name)") }
        return kilobytes * 1024
    }

    /// Resets the peak-memory mark of one executable (Linux: write 5 to `clear_refs`).
    public func resetPeakMemory(of name: String) throws {
        guard let pid = pid(of: name) else { return }
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
    }
}
