import Foundation
import TestSupport
import Testing

/// `compass up --s3` against the real executables, PostgreSQL and SeaweedFS's `weed`: the store
/// starts first with its bucket, Documents comes up ready on it (it checks the bucket before it
/// reports ready), the bucket answers signed requests with the stack's keys and refuses unsigned
/// ones, and Ctrl-C stops `weed` with the rest.
@Suite(.serialized) struct CompassUpS3Tests {
    @Test func upWithS3StartsSeaweedFSWithItsBucketAndStopsIt() async throws {
        try await TestDatabase.withDatabase { database in
            // Below Linux's ephemeral ports (32768 up): weed and the test processes' own outgoing
            // connections take local ports from there, and one in the stack's range made a service's
            // bind fail. CompassUpTests and the locust check take 21000-31999.
            let base = Int.random(in: 150...209) * 100
            let s3Port = base + 40
            let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            defer { try? FileManager.default.removeItem(at: root.appendingPathComponent(".local/s3-run-\(base)")) }
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = database.url
            let up = try await PeerProcess(
                "compass", arguments: ["up", "--s3", "--base-port", String(base)], environment: environment, timeout: .seconds(180))
            #expect(up.output.contains("seaweedfs ready: bucket compass-documents at http://127.0.0.1:\(s3Port)"), "\(up.output)")
            #expect(up.readyLine.split(separator: ",").contains("documents"), "\(up.output)")
            #expect(up.output.contains("S3 (SeaweedFS)  http://127.0.0.1:\(s3Port)/compass-documents"))

            let keys = root.appendingPathComponent(".local/keys")
            let keyID = try String(contentsOf: keys.appendingPathComponent("s3-access-key-id"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let secret = try String(contentsOf: keys.appendingPathComponent("s3-secret-access-key"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let bucketURL = "http://127.0.0.1:\(s3Port)/compass-documents?list-type=2"
            let signed = try await ChildProcess.run(
                "/usr/bin/curl", ["-s", "-w", "\n%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(keyID):\(secret)", bucketURL])
            #expect(signed.output.hasSuffix("\n200") && signed.output.contains("<Name>compass-documents</Name>"), "\(signed.output)")
            let unsigned = try await ChildProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", bucketURL])
            #expect(unsigned.output == "403")

            up.signal(SIGINT)
            #expect(await up.waitForExit(timeout: .seconds(90)) == 0)
            #expect(CompassUpTests().listener(onPort: s3Port) == nil, "weed still listens on \(s3Port)")
            #expect(CompassUpTests().listener(onPort: base + 23) == nil)
        }
    }
}
