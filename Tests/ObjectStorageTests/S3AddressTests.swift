import Foundation
import Testing

@testable import ObjectStorage

/// Where a request goes, in both addressing styles, and what a configuration must hold.
@Suite("S3 addressing and configuration")
struct S3AddressTests {
    static func configuration(_ endpoint: String, bucket: String = "docs", pathStyle: Bool) -> S3Configuration {
        S3Configuration(
            endpoint: URL(string: endpoint)!, region: "eu-west-1", bucket: bucket, accessKeyID: "AK", secretAccessKey: "SK",
            pathStyle: pathStyle)
    }

    @Test func pathStyleKeepsTheBucketInThePathAndThePortInHost() throws {
        let client = try S3Client(configuration: Self.configuration("http://127.0.0.1:8333", pathStyle: true), logger: .init(label: "t"))
        let address = client.address(key: "users/u 1/a+b.mp4")
        #expect(address.base == "http://127.0.0.1:8333")
        #expect(address.host == "127.0.0.1:8333")
        #expect(address.path == "/docs/users/u%201/a%2Bb.mp4")
        #expect(client.address(key: nil).path == "/docs")
    }

    @Test func virtualHostStylePutsTheBucketInTheHostName() throws {
        let client = try S3Client(
            configuration: Self.configuration("https://s3.eu-west-1.amazonaws.com:443", pathStyle: false), logger: .init(label: "t"))
        let address = client.address(key: "a/b.mp4")
        #expect(address.base == "https://docs.s3.eu-west-1.amazonaws.com")
        #expect(address.host == "docs.s3.eu-west-1.amazonaws.com")
        #expect(address.path == "/a/b.mp4")
        #expect(client.address(key: nil).path == "/")
    }

    @Test func badConfigurationsAndKeysAreRefusedBeforeAnyRequest() async throws {
        for (endpoint, bucket) in [("ftp://host", "docs"), ("http://host/prefix", "docs"), ("http://host", "Docs"), ("http://host", "ab")] {
            #expect(throws: S3ConfigurationError.self) {
                try S3Client(configuration: Self.configuration(endpoint, bucket: bucket, pathStyle: true), logger: .init(label: "t"))
            }
        }
        let client = try S3Client(configuration: Self.configuration("http://127.0.0.1:1", pathStyle: true), logger: .init(label: "t"))
        for key in ["", "a/../b", "./a", String(repeating: "k", count: 1025)] {
            let error = await #expect(throws: S3Error.self) { try await client.putObject(key: key, bytes: [1]) }
            #expect(error?.code == "InvalidKey")
            #expect(error?.isRetryable == false)
        }
    }
}
