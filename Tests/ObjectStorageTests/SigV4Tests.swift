import Foundation
import Testing

@testable import ObjectStorage

/// SigV4 against published vectors: AWS's signature test suite (`aws-sig-v4-test-suite`, as kept
/// in awslabs/aws-c-auth's tests/aws-signing-test-suite/v4) and the S3 examples of "Signature
/// Calculations for the Authorization Header: Transferring Payload in a Single Chunk" and
/// "Authenticating Requests: Using Query Parameters". Each step is compared, not just the result.
@Suite("SigV4 vectors")
struct SigV4Tests {
    /// The suite's credentials, scope and time: 2015-08-30T12:36:00Z, us-east-1, service "service".
    static let suite = SigV4Signer(
        accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1",
        service: "service")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)
    /// The S3 examples': AKIAIOSFODNN7EXAMPLE, 2013-05-24T00:00:00Z, us-east-1, s3.
    static let s3 = SigV4Signer(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)
    static let empty = SigV4Signer.emptyPayloadHash

    @Test func dateForms() {
        #expect(SigV4Signer.amzDate(Self.suiteDate) == "20150830T123600Z")
        #expect(SigV4Signer.amzDate(Self.s3Date) == "20130524T000000Z")
    }

    @Test("get-vanilla") func getVanilla() {
        let signed = Self.suite.sign(
            .init(
                method: "GET", path: "/", headers: [.init("Host", "example.amazonaws.com"), .init("X-Amz-Date", "20150830T123600Z")],
                payloadHash: Self.empty), at: Self.suiteDate)
        #expect(
            signed.canonicalRequest
                == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n\(Self.empty)")
        #expect(
            signed.stringToSign
                == "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                + "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63")
        #expect(signed.signature == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        #expect(
            signed.authorization
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    @Test("get-vanilla-query-order-key-case") func queryOrder() {
        let signed = Self.suite.sign(
            .init(
                method: "GET", path: "/", query: [.init("Param2", "value2"), .init("Param1", "value1")],
                headers: [.init("Host", "example.amazonaws.com"), .init("X-Amz-Date", "20150830T123600Z")], payloadHash: Self.empty),
            at: Self.suiteDate)
        #expect(
            signed.canonicalRequest
                == "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
                + "host;x-amz-date\n\(Self.empty)")
        #expect(signed.stringToSign.hasSuffix("\n816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0"))
        #expect(signed.signature == "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500")
    }

    @Test("get-header-value-trim") func headerValueTrim() {
        let signed = Self.suite.sign(
            .init(
                method: "GET", path: "/",
                headers: [
                    .init("Host", "example.amazonaws.com"), .init("My-Header1", " value1"), .init("My-Header2", " \"a   b   c\""),
                    .init("X-Amz-Date", "20150830T123600Z"),
                ], payloadHash: Self.empty), at: Self.suiteDate)
        #expect(
            signed.canonicalRequest
                == "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\n"
                + "host;my-header1;my-header2;x-amz-date\n\(Self.empty)")
        #expect(signed.stringToSign.hasSuffix("\na726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7"))
        #expect(signed.signature == "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736")
    }

    /// With the body signed (`x-amz-content-sha256`), as every S3 request with a body is.
    @Test("post-x-www-form-urlencoded") func formPost() {
        let body = Array("Param1=value1".utf8)
        let hash = SigV4Signer.hexSHA256(body)
        #expect(hash == "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e")
        let signed = Self.suite.sign(
            .init(
                method: "POST", path: "/",
                headers: [
                    .init("Content-Type", "application/x-www-form-urlencoded"), .init("Host", "example.amazonaws.com"),
                    .init("Content-Length", "13"), .init("x-amz-content-sha256", hash), .init("X-Amz-Date", "20150830T123600Z"),
                ], payloadHash: hash), at: Self.suiteDate)
        #expect(
            signed.canonicalRequest
                == "POST\n/\n\ncontent-length:13\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\n"
                + "x-amz-content-sha256:\(hash)\nx-amz-date:20150830T123600Z\n\n"
                + "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n\(hash)")
        #expect(signed.stringToSign.hasSuffix("\nb1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb"))
        #expect(signed.signature == "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b")
    }

    static func s3Headers(_ extra: [SigV4Signer.Header], payload: String = empty) -> [SigV4Signer.Header] {
        [
            .init("Host", "examplebucket.s3.amazonaws.com"), .init("x-amz-content-sha256", payload),
            .init("x-amz-date", "20130524T000000Z"),
        ] + extra
    }

    @Test("S3 example: GET Object with a Range") func s3GetObject() {
        let signed = Self.s3.sign(
            .init(method: "GET", path: "/test.txt", headers: Self.s3Headers([.init("Range", "bytes=0-9")]), payloadHash: Self.empty),
            at: Self.s3Date)
        #expect(
            signed.canonicalRequest
                == "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\nx-amz-content-sha256:\(Self.empty)\n"
                + "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n\(Self.empty)")
        #expect(
            signed.stringToSign
                == "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
                + "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972")
        #expect(signed.signature == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test("S3 example: PUT Object, the key encoded, the payload hashed") func s3PutObject() {
        let payload = SigV4Signer.hexSHA256(Array("Welcome to Amazon S3.".utf8))
        #expect(payload == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let path = "/" + SigV4Signer.uriEncode("test$file.text", keepSlash: true)
        #expect(path == "/test%24file.text")
        let signed = Self.s3.sign(
            .init(
                method: "PUT", path: path,
                headers: Self.s3Headers(
                    [.init("Date", "Fri, 24 May 2013 00:00:00 GMT"), .init("x-amz-storage-class", "REDUCED_REDUNDANCY")],
                    payload: payload), payloadHash: payload), at: Self.s3Date)
        #expect(
            signed.canonicalRequest
                == "PUT\n/test%24file.text\n\ndate:Fri, 24 May 2013 00:00:00 GMT\nhost:examplebucket.s3.amazonaws.com\n"
                + "x-amz-content-sha256:\(payload)\nx-amz-date:20130524T000000Z\nx-amz-storage-class:REDUCED_REDUNDANCY\n\n"
                + "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n\(payload)")
        #expect(signed.stringToSign.hasSuffix("\n9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d"))
        #expect(signed.signature == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test("S3 example: GET Bucket lifecycle (a query key without value)") func s3Lifecycle() {
        let signed = Self.s3.sign(
            .init(method: "GET", path: "/", query: [.init("lifecycle")], headers: Self.s3Headers([]), payloadHash: Self.empty),
            at: Self.s3Date)
        #expect(signed.canonicalRequest.hasPrefix("GET\n/\nlifecycle=\nhost:"))
        #expect(signed.stringToSign.hasSuffix("\n9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca"))
        #expect(signed.signature == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
    }

    @Test("S3 example: GET Bucket (list objects), query sorted") func s3ListObjects() {
        let signed = Self.s3.sign(
            .init(
                method: "GET", path: "/", query: [.init("prefix", "J"), .init("max-keys", "2")], headers: Self.s3Headers([]),
                payloadHash: Self.empty), at: Self.s3Date)
        #expect(signed.canonicalRequest.hasPrefix("GET\n/\nmax-keys=2&prefix=J\nhost:"))
        #expect(signed.stringToSign.hasSuffix("\ndf57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7"))
        #expect(signed.signature == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
    }

    @Test("S3 example: a presigned GET valid one day") func s3Presigned() {
        let (query, signed) = Self.s3.presign(
            .init(method: "GET", path: "/test.txt", headers: [.init("host", "examplebucket.s3.amazonaws.com")], payloadHash: ""),
            at: Self.s3Date, expires: 86400)
        #expect(
            signed.canonicalRequest
                == "GET\n/test.txt\nX-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1"
                + "%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\n"
                + "host:examplebucket.s3.amazonaws.com\n\nhost\nUNSIGNED-PAYLOAD")
        #expect(signed.stringToSign.hasSuffix("\n3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04"))
        #expect(signed.signature == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
        #expect(query.last == .init("X-Amz-Signature", "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"))
    }

    @Test func uriEncodingKeepsOnlyUnreserved() {
        #expect(SigV4Signer.uriEncode("a b+c/d~e_f.g-h") == "a%20b%2Bc%2Fd~e_f.g-h")
        #expect(SigV4Signer.uriEncode("users/ü 1/x", keepSlash: true) == "users/%C3%BC%201/x")
        #expect(SigV4Signer.canonicalQuery([.init("uploads"), .init("a", "x y")]) == "a=x%20y&uploads=")
    }

    @Test func secretNeverPrinted() {
        let configuration = S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:9000")!, region: "us-east-1", bucket: "docs", accessKeyID: "AK",
            secretAccessKey: "very-secret-value", pathStyle: true)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in ["\(configuration)", String(reflecting: configuration), dumped] {
            #expect(!text.contains("very-secret-value"))
            #expect(text.contains("<redacted>"))
        }
    }
}
