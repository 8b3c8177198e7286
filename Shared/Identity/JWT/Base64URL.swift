import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS segment.
///
/// Decoding is strict: only the url-safe alphabet, no `=` padding, no whitespace, and no length
/// that cannot come from whole bytes. A lenient decoder would let one token have many spellings.
public enum Base64URL {
    /// Encodes `bytes` as unpadded base64url.
    public static func encode(_ bytes: some DataProtocol) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// Decodes unpadded base64url, or `nil` when `text` is not exactly that.
    public static func decode(_ text: some StringProtocol) -> Data? {
        var standard = ""
        standard.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "-"): standard.append("+")
            case UInt8(ascii: "_"): standard.append("/")
            default: return nil
            }
        }
        switch standard.utf8.count % 4 {
        case 1: return nil
        case 2: standard += "=="
        case 3: standard += "="
        default: break
        }
        guard let data = Data(base64Encoded: standard) else { return nil }
        // Reject non-canonical trailing bits: re-encoding must give back the same text.
        guard encode(data) == String(text) else { return nil }
        return data
    }
}
