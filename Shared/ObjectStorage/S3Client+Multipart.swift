import Foundation

extension S3Client {
    /// Starts a multipart upload of `key` and returns its upload id. Parts are 5 MiB at least
    /// (S3's rule) but the last, numbered 1…10000.
    public func createMultipartUpload(key: String, contentType: String? = nil) async throws -> String {
        try checkKey(key, "CreateMultipartUpload")
        let headers = contentType.map { [SigV4Signer.Header("content-type", $0)] } ?? []
        let response = try succeeded(
            try await send("CreateMultipartUpload", method: "POST", key: key, query: [.init("uploads")], headers: headers),
            "CreateMultipartUpload", key)
        guard let uploadId = try xml(response, "CreateMultipartUpload", key)["UploadId"], !uploadId.isEmpty else {
            throw S3Error(
                operation: "CreateMultipartUpload", resource: resource(key), reason: .malformedResponse, status: response.status,
                code: nil, message: "no UploadId in the reply")
        }
        return uploadId
    }

    /// Stores one part and returns its ETag (to name in `completeMultipartUpload`). Sending the
    /// same part number again replaces the part: a retry after a lost reply is safe.
    public func uploadPart(key: String, uploadId: String, partNumber: Int, bytes: [UInt8]) async throws -> String {
        try checkKey(key, "UploadPart")
        let query: [SigV4Signer.QueryItem] = [.init("partNumber", String(partNumber)), .init("uploadId", uploadId)]
        let response = try succeeded(
            try await send("UploadPart", method: "PUT", key: key, query: query, body: bytes), "UploadPart", key)
        guard let etag = response.header("etag"), !etag.isEmpty else {
            throw S3Error(
                operation: "UploadPart", resource: resource(key), reason: .malformedResponse, status: response.status, code: nil,
                message: "no ETag for part \(partNumber)")
        }
        return etag
    }

    /// Joins the parts into the object and returns its ETag. S3 may answer 200 and still fail (the
    /// error is then in the body, sent after a long join): that is an error here too.
    @discardableResult
    public func completeMultipartUpload(key: String, uploadId: String, parts: [S3CompletedPart]) async throws -> String {
        try checkKey(key, "CompleteMultipartUpload")
        var xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        for part in parts.sorted(by: { $0.partNumber < $1.partNumber }) {
            xml += "<Part><PartNumber>\(part.partNumber)</PartNumber><ETag>\(xmlEscape(part.etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let response = try succeeded(
            try await send(
                "CompleteMultipartUpload", method: "POST", key: key, query: [.init("uploadId", uploadId)],
                headers: [.init("content-type", "application/xml")], body: Array(xml.utf8)),
            "CompleteMultipartUpload", key)
        let root = try self.xml(response, "CompleteMultipartUpload", key)
        if root.name == "Error" {
            let code = root["Code"]
            // A 200 carrying an error: judge it by its code; with no known code it is the store's fault.
            let reason = S3Error.reason(status: code == nil ? 500 : 400, code: code)
            throw S3Error(
                operation: "CompleteMultipartUpload", resource: resource(key), reason: reason == .rejected && code == nil ? .serviceError : reason,
                status: response.status, code: code, message: root["Message"] ?? "", requestID: root["RequestId"])
        }
        return root["ETag"] ?? ""
    }

    /// Abandons the upload and frees its parts; an upload already gone (`NoSuchUpload`) is success.
    public func abortMultipartUpload(key: String, uploadId: String) async throws {
        try checkKey(key, "AbortMultipartUpload")
        let response = try await send("AbortMultipartUpload", method: "DELETE", key: key, query: [.init("uploadId", uploadId)])
        if response.status == 404 { return }
        _ = try succeeded(response, "AbortMultipartUpload", key)
    }

    /// Every unfinished multipart upload under `prefix` (all pages), for sweeps.
    public func listMultipartUploads(prefix: String) async throws -> [S3MultipartUpload] {
        var uploads: [S3MultipartUpload] = []
        var markers: (key: String, uploadId: String)?
        while true {
            var query: [SigV4Signer.QueryItem] = [.init("uploads"), .init("prefix", prefix)]
            if let markers { query += [.init("key-marker", markers.key), .init("upload-id-marker", markers.uploadId)] }
            let response = try succeeded(
                try await send("ListMultipartUploads", method: "GET", key: nil, query: query), "ListMultipartUploads", nil)
            let root = try xml(response, "ListMultipartUploads", nil)
            uploads += root.all("Upload").map {
                S3MultipartUpload(key: $0["Key"] ?? "", uploadId: $0["UploadId"] ?? "", initiated: $0["Initiated"].flatMap(S3Dates.iso8601))
            }
            guard root["IsTruncated"] == "true", let key = root["NextKeyMarker"], let uploadId = root["NextUploadIdMarker"],
                (key, uploadId) != (markers?.key ?? "", markers?.uploadId ?? "")
            else { return uploads }
            markers = (key, uploadId)
        }
    }

    /// The parts already stored in an upload (all pages), to resume it. An upload that is gone
    /// throws `noSuchUpload`.
    public func listParts(key: String, uploadId: String) async throws -> [S3PartInfo] {
        try checkKey(key, "ListParts")
        var parts: [S3PartInfo] = []
        var marker: String?
        while true {
            var query: [SigV4Signer.QueryItem] = [.init("uploadId", uploadId)]
            if let marker { query.append(.init("part-number-marker", marker)) }
            let response = try succeeded(
                try await send("ListParts", method: "GET", key: key, query: query), "ListParts", key)
            let root = try xml(response, "ListParts", key)
            parts += root.all("Part").compactMap { part in
                part["PartNumber"].flatMap(Int.init).map {
                    S3PartInfo(partNumber: $0, etag: part["ETag"] ?? "", size: part["Size"].flatMap(Int64.init) ?? 0)
                }
            }
            guard root["IsTruncated"] == "true", let next = root["NextPartNumberMarker"], next != marker else { return parts }
            marker = next
        }
    }
}
