import Crypto
import Foundation

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`), written once for every S3 call: the canonical
/// request, the string to sign, the signing key and the `Authorization` header, or the same
/// signature carried in the query of a presigned URL. Pure: no clock, no I/O; the caller passes the
/// time, so the AWS test suite's vectors check every step exactly.
public struct SigV4Signer: Sendable {
    public let accessKeyID: String
    private let secretAccessKey: String
    public let region: String
    public let service: String

    public init(accessKeyID: String, secretAccessKey: String, region: String, service: String = "s3") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.service = service
    }

    /// A request as it will be sent, reduced to what the signature covers.
    public struct Request: Sendable {
        public var method: String
        /// The path exactly as it goes on the wire (already percent-encoded): S3 signs it as sent,
        /// it does not encode it a second time or remove dot segments.
        public var path: String
        /// Query parameters, not encoded: the signer encodes and sorts them.
        public var query: [QueryItem]
        /// The headers to sign (`host` included); every header given is signed.
        public var headers: [Header]
        /// Hex SHA-256 of the body (`x-amz-content-sha256`), or `UNSIGNED-PAYLOAD` for presigning.
        public var payloadHash: String

        public init(method: String, path: String, query: [QueryItem] = [], headers: [Header], payloadHash: String) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    public struct QueryItem: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String = "") {
            self.name = name
            self.value = value
        }
    }

    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Every intermediate of one signature, so tests can compare each with the published vectors.
    public struct Signature: Sendable {
        public let canonicalRequest: String
        public let stringToSign: String
        public let signature: String
        public let signedHeaders: String
        public let credentialScope: String
        public let accessKeyID: String

        /// The `Authorization` header's value.
        public var authorization: String {
            "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(credentialScope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        }
    }

    /// Signs `request` made at `date`. The request's headers must already hold `x-amz-date`
    /// (`SigV4Signer.amzDate(date)`) and, for S3, `x-amz-content-sha256`.
    public func sign(_ request: Request, at date: Date) -> Signature {
        let (canonicalHeaders, signedHeaders) = Self.canonicalHeaders(request.headers)
        let canonicalRequest = [
            request.method,
            request.path.isEmpty ? "/" : request.path,
            Self.canonicalQuery(request.query),
            canonicalHeaders,
            signedHeaders,
            request.payloadHash,
        ].joined(separator: "\n")
        let timestamp = Self.amzDate(date)
        let scope = "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", timestamp, scope, Self.hexSHA256(Array(canonicalRequest.utf8)),
        ].joined(separator: "\n")
        let key = signingKey(day: String(timestamp.prefix(8)))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key)
        return Signature(
            canonicalRequest: canonicalRequest, stringToSign: stringToSign, signature: Self.hex(mac),
            signedHeaders: signedHeaders, credentialScope: scope, accessKeyID: accessKeyID)
    }

    /// The query of a presigned URL for `request` (its `X-Amz-*` parameters added to its own, the
    /// signature last), valid `expires` seconds from `date`. Only `host` is signed and the payload
    /// is `UNSIGNED-PAYLOAD`, as S3 asks of a URL a browser or player fetches.
    public func presign(_ request: Request, at date: Date, expires: Int) -> (query: [QueryItem], signature: Signature) {
        let timestamp = Self.amzDate(date)
        let scope = "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request"
        let signedNames = Self.canonicalHeaders(request.headers).signed
        var unsigned = request
        unsigned.payloadHash = "UNSIGNED-PAYLOAD"
        unsigned.query += [
            QueryItem("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            QueryItem("X-Amz-Credential", "\(accessKeyID)/\(scope)"),
            QueryItem("X-Amz-Date", timestamp),
            QueryItem("X-Amz-Expires", String(expires)),
            QueryItem("X-Amz-SignedHeaders", signedNames),
        ]
        let signature = sign(unsigned, at: date)
        return (unsigned.query + [QueryItem("X-Amz-Signature", signature.signature)], signature)
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), service), "aws4_request").
    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Array("AWS4\(secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    /// Lower-case names sorted; values trimmed with inner runs of spaces folded to one; repeated
    /// names joined with commas in the order given. Returns the block and the `;`-joined names.
    static func canonicalHeaders(_ headers: [Header]) -> (block: String, signed: String) {
        var values: [String: [String]] = [:]
        for header in headers {
            let folded = header.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            values[header.name.lowercased(), default: []].append(folded)
        }
        let names = values.keys.sorted()
        let block = names.map { "\($0):\(values[$0]!.joined(separator: ","))\n" }.joined()
        return (block, names.joined(separator: ";"))
    }

    /// Names and values URI-encoded (RFC 3986 unreserved kept, space as %20), sorted by name then value.
    static func canonicalQuery(_ items: [QueryItem]) -> String {
        // Encoded text is ASCII, so String's order is byte order, as SigV4 sorts.
        let encoded: [(name: String, value: String)] = items.map { (uriEncode($0.name), uriEncode($0.value)) }
        let sorted = encoded.sorted { left, right in
            left.name == right.name ? left.value < right.value : left.name < right.name
        }
        return sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// RFC 3986 percent-encoding with upper-case hex, as SigV4 requires; `/` kept when `keepSlash`
    /// (an object key in a path).
    public static func uriEncode(_ text: String, keepSlash: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if unreserved[Int(byte)] || (keepSlash && byte == UInt8(ascii: "/")) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// RFC 3986's unreserved bytes: A-Z a-z 0-9 - _ . ~
    private static let unreserved: [Bool] = (0..<256).map { byte in
        let character = Character(Unicode.Scalar(UInt8(byte)))
        return (character.isASCII && (character.isLetter || character.isNumber)) || "-_.~".contains(character)
    }

    /// `YYYYMMDD'T'HHMMSS'Z'` in UTC, the form of `x-amz-date` and `X-Amz-Date`.
    public static func amzDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    /// Hex SHA-256 of `bytes`: the payload hash of `x-amz-content-sha256`.
    public static func hexSHA256(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// The SHA-256 of an empty body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
