import Bus
import Foundation
import Testing

@testable import DocumentsService

extension DocumentsSuites {
    @Suite("Documents: type signatures and file URLs (pure functions)")
    struct SignatureTests {
        static func ftyp(_ brand: String) -> [UInt8] { [0, 0, 0, 0x18] + Array("ftyp\(brand)".utf8) + [0, 0, 0, 0] }

        @Test("each known type accepts its own signature and refuses the others'")
        func signatures() {
            let samples: [String: [UInt8]] = [
                "video/mp4": Self.ftyp("isom"),
                "video/quicktime": [0, 0, 0, 8] + Array("wide".utf8) + [0, 0, 0, 0, 0, 0, 0, 0],
                "image/heic": Self.ftyp("heic"),
                "image/jpeg": [0xFF, 0xD8, 0xFF, 0xDB] + [UInt8](repeating: 0, count: 12),
                "image/png": [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 8),
                "image/gif": Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 10),
                "image/webp": Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8),
                "application/pdf": Array("%PDF-1.4\n%âãÏÓ".utf8),
            ]
            for (type, head) in samples {
                #expect(MagicNumbers.check(fileType: type, head: head) == .matches, "\(type)")
                for (other, otherHead) in samples where other != type {
                    // MP4 and QuickTime take any ftyp box (HEIC's too); HEIC needs a HEIF brand.
                    if (type == "video/quicktime" || type == "video/mp4") && (other == "video/mp4" || other == "image/heic") { continue }
                    #expect(MagicNumbers.check(fileType: type, head: otherHead) != .matches, "\(type) took \(other)")
                }
            }
            #expect(MagicNumbers.check(fileType: "text/plain", head: [1, 2, 3]) == .unchecked)
            #expect(MagicNumbers.check(fileType: nil, head: []) == .unchecked)
            #expect(MagicNumbers.check(fileType: "image/png", head: [0x89, 0x50]) != .matches)
        }

        @Test("a PDF is complete when %%EOF is in its last kilobyte")
        func pdfTrailer() {
            #expect(MagicNumbers.looksComplete(pdfTail: Array("xref\n%%EOF".utf8)))
            #expect(MagicNumbers.looksComplete(pdfTail: Array("%%EOF\r\n".utf8)))
            #expect(!MagicNumbers.looksComplete(pdfTail: Array("stream\nabc".utf8)))
            #expect(!MagicNumbers.looksComplete(pdfTail: Array("%%EO".utf8)))
        }

        @Test("file URLs: made with a safe name, found from the stored form or a URL ending in it, anything else refused")
        func fileURLs() {
            let id = UUID()
            let lower = id.uuidString.lowercased()
            #expect(FileURL.make(id: id, fileName: "My Highlights (2025).mp4") == "documents/\(lower)/My_Highlights__2025_.mp4")
            #expect(FileURL.make(id: id, fileName: "../../etc/passwd") == "documents/\(lower)/_.._etc_passwd")
            #expect(FileURL.make(id: id, fileName: nil) == "documents/\(lower)/file")
            let stored = "documents/\(lower)/a.pdf"
            #expect(FileURL.normalize(stored) == stored)
            #expect(FileURL.normalize("/storage/v1/object/documents/\(id.uuidString)/a.pdf") == stored)
            #expect(FileURL.normalize("https://cdn.example.com/storage/v1/object/documents/\(lower)/a.pdf?download=1") == stored)
            for bad in [
                "", "a", "documents", "documents/\(lower)", "documents/x/a.pdf", "https://example.com", "documents/\(lower)/a/b",
                "documents/\(lower)/a\n",
            ] {
                #expect(FileURL.normalize(bad) == nil, "\(bad)")
            }
        }

        @Test("declared file types: parameters dropped and lowercased; anything not type/subtype refused")
        func fileTypes() throws {
            #expect(try MetadataValidation.fileType("Application/PDF; charset=binary") == "application/pdf")
            #expect(try MetadataValidation.fileType("video/mp4") == "video/mp4")
            for bad in ["", "video", "video/", "/mp4", "video/mp4/x", "vi deo/mp4", String(repeating: "a", count: 130) + "/x"] {
                #expect(throws: BusError(.invalidArgument, "fileType must be a MIME type such as video/mp4"), "\(bad)") {
                    try MetadataValidation.fileType(bad)
                }
            }
        }
    }
}
