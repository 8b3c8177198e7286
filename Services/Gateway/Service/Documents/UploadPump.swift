import Bus
import Contracts
import Foundation
import Hummingbird

/// Streams a tus `PATCH` body into `documents.append` calls of `chunkSize` bytes each, so the
/// gateway holds one chunk of an upload at a time, never the body. Each chunk is committed by
/// Documents before the next is read (back-pressure reaches the client through NIO).
///
/// When the client's connection breaks mid-body, the bytes already received are still appended
/// (tus: the server should keep partial data), so a resumed upload goes on from there.
package struct UploadPump: Sendable {
    let services: ServiceClients
    let chunkSize: Int

    /// Appends the body at `offset` (which must be the committed offset: `conflict` otherwise);
    /// the upload's state after the last chunk.
    func pump(_ body: RequestBody, id: UUID, offset: Int64, principal: Principal, traceparent: String) async throws -> UploadStatus? {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(chunkSize)
        var offset = offset
        var status: UploadStatus?
        func flush() async throws {
            guard buffer.readableBytes > 0 else { return }
            let chunk = Data(buffer.readableBytesView)
            buffer.clear()
            let reply = try await services.callWithAttachments(
                .documents, DocumentsAppend.self, .init(id: id, offset: offset), principal: principal, traceparent: traceparent,
                attachments: [chunk]
            ).reply
            offset = reply.offset
            status = reply
        }
        var iterator = body.makeAsyncIterator()
        while true {
            let part: ByteBuffer?
            do { part = try await iterator.next() } catch {
                // The body was cut: keep what arrived, then report the break.
                try? await flush()
                throw error
            }
            guard var part else { break }
            while part.readableBytes > 0 {
                let take = min(chunkSize - buffer.readableBytes, part.readableBytes)
                var slice = part.readSlice(length: take)!
                buffer.writeBuffer(&slice)
                if buffer.readableBytes == chunkSize { try await flush() }
            }
        }
        try await flush()
        return status
    }
}
