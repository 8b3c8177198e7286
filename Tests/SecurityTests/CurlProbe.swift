import Foundation
import TestSupport

/// One request through the `curl` command line tool, for requests URLSession will not send as
/// they are (headers and URLs beyond any sane size): the status code, or 0 when the server closed
/// the connection without an answer. The process is awaited through its termination handler, so
/// no thread of the cooperative pool waits on it.
enum CurlProbe {
    /// - Parameter chunkedBody: sent with `Transfer-Encoding: chunked` (no `Content-Length`), so
    ///   the server can only find its size by reading it.
    static func status(_ url: String, method: String = "GET", headers: [String: String] = [:], chunkedBody: Data? = nil) async throws -> Int {
        var arguments = ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20", "-X", method, "--path-as-is"]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        var bodyFile: URL?
        if let chunkedBody {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("curl-body-\(UUID().uuidString)")
            try chunkedBody.write(to: file)
            bodyFile = file
            arguments += ["-H", "Transfer-Encoding: chunked", "--data-binary", "@" + file.path]
        }
        defer { if let bodyFile { try? FileManager.default.removeItem(at: bodyFile) } }
        let curl = try await ChildProcess.run("/usr/bin/env", ["curl"] + arguments + [url])
        if curl.status == 127 { throw TestSupportError("curl is not installed (deploy/lib/install-deps installs it)") }
        return Int(curl.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}
