/// Checks the first bytes of a file against the type it was declared as (the types to check: MP4 and
/// QuickTime, JPEG, PNG, HEIC/HEIF, GIF, WebP, PDF). Types we know no signature for are not
/// checked: they are stored as declared, and the seed's `canPreview` decides how they are shown.
enum MagicNumbers {
    /// Bytes the check needs at most (a shorter file is checked whole when it completes).
    static let headerLength = 16

    enum Verdict: Equatable {
        case matches
        /// The bytes are not what the declared type says; the text says what was expected.
        case mismatch(expected: String)
        /// No signature known for the declared type (or no type declared).
        case unchecked
    }

    static func check(fileType: String?, head: [UInt8]) -> Verdict {
        guard let fileType, let signature = signature(for: fileType) else { return .unchecked }
        return signature.test(head) ? .matches : .mismatch(expected: signature.name)
    }

    private struct Signature {
        var name: String
        var test: ([UInt8]) -> Bool
    }

    private static func signature(for fileType: String) -> Signature? {
        switch fileType {
        case "video/mp4", "video/x-m4v", "audio/mp4":
            Signature(name: "an ISO media file (ftyp box)") { box(at: 4, in: $0) == "ftyp" }
        case "video/quicktime":
            Signature(name: "a QuickTime file (ftyp, moov, mdat, wide, free, skip or pnot atom)") {
                ["ftyp", "moov", "mdat", "wide", "free", "skip", "pnot"].contains(box(at: 4, in: $0))
            }
        case "image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence":
            Signature(name: "a HEIF image (ftyp box with a HEIF brand)") {
                box(at: 4, in: $0) == "ftyp"
                    && ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"].contains(box(at: 8, in: $0))
            }
        case "image/jpeg", "image/jpg", "image/pjpeg":
            Signature(name: "a JPEG image (FF D8 FF)") { $0.starts(with: [0xFF, 0xD8, 0xFF]) }
        case "image/png":
            Signature(name: "a PNG image") { $0.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) }
        case "image/gif":
            Signature(name: "a GIF image (GIF87a or GIF89a)") { $0.starts(with: Array("GIF87a".utf8)) || $0.starts(with: Array("GIF89a".utf8)) }
        case "image/webp":
            Signature(name: "a WebP image (RIFF….WEBP)") { $0.starts(with: Array("RIFF".utf8)) && box(at: 8, in: $0) == "WEBP" }
        case "application/pdf":
            Signature(name: "a PDF (%PDF-)") { $0.starts(with: Array("%PDF-".utf8)) }
        default:
            nil
        }
    }

    /// Four bytes at `offset` as ASCII, or nil when the file is shorter.
    private static func box(at offset: Int, in bytes: [UInt8]) -> String? {
        guard bytes.count >= offset + 4 else { return nil }
        return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }

    /// How many trailing bytes ``looksComplete(pdfTail:)`` reads.
    static let pdfTailLength = 1024

    /// A PDF ends with `%%EOF` (possibly followed by a line end) within its last kilobyte; one that
    /// does not was cut off or is corrupt: the client shows "File may be corrupt".
    static func looksComplete(pdfTail tail: [UInt8]) -> Bool {
        let marker = Array("%%EOF".utf8)
        guard tail.count >= marker.count else { return false }
        for start in stride(from: tail.count - marker.count, through: 0, by: -1) where tail[start..<start + marker.count].elementsEqual(marker) {
            return true
        }
        return false
    }
}
