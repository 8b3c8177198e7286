import Bus
import Testing

@testable import GatewayService

/// `Range` parsing against a document's length, and tus `Upload-Metadata`.
struct ByteRangeTests {
    @Test func singleRangesResolveAgainstTheLength() {
        #expect(ByteRange(header: nil, length: 100) == .whole)
        #expect(ByteRange(header: "bytes=0-9", length: 100) == .partial(start: 0, end: 9))
        #expect(ByteRange(header: "bytes=90-", length: 100) == .partial(start: 90, end: 99))
        #expect(ByteRange(header: "bytes=90-1000", length: 100) == .partial(start: 90, end: 99))
        #expect(ByteRange(header: "bytes=-10", length: 100) == .partial(start: 90, end: 99))
        #expect(ByteRange(header: "bytes=-1000", length: 100) == .partial(start: 0, end: 99))
        #expect(ByteRange(header: "bytes=0-99999999999999999999999", length: 100) == .partial(start: 0, end: 99))
        #expect(ByteRange(header: "BYTES=1-1", length: 100) == .partial(start: 1, end: 1))
        #expect(ByteRange(header: "bytes=100-", length: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=-0", length: 100) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=0-", length: 0) == .unsatisfiable)
        // Not one well-formed byte range: ignored.
        for ignored in ["items=0-1", "bytes=0-1,3-4", "bytes=5-2", "bytes=a-b", "bytes=-", "bytes=1", "bytes=+1-2"] {
            #expect(ByteRange(header: ignored, length: 100) == .whole, "\(ignored)")
        }
    }

    @Test func tusMetadataIsBase64Pairs() throws {
        let metadata = try TusMetadata(header: "filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential, type dHJhbnNjcmlwdA==")
        #expect(metadata.fileName == "world_domination_plan.pdf")
        #expect(metadata.title == "world_domination_plan.pdf")
        #expect(metadata.type == "transcript")
        #expect(metadata.pairs["is_confidential"] == "")
        #expect(throws: BusError(.invalidArgument, "Upload-Metadata: the value of title is not base64 UTF-8")) {
            try TusMetadata(header: "title ***")
        }
        #expect(try TusMetadata(header: nil).pairs.isEmpty)
    }
}
