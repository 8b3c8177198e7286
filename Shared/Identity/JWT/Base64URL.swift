import ExtrasBase64
import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS segment, our refresh tokens
/// and sealed envelopes: swift-extras-base64 (the codec jwt-kit uses) with a strictness check.
///
/// The codec alone is lenient (it takes `=` padding and ignores bits after the last whole byte),
/// so one token would have many spellings. A text is accepted only when it is exactly what
/// encoding its bytes gives back: the url-safe alphabet, no padding, no whitespace, no length
/// that cannot come from whole bytes, and no set bits after the last whole byte.
public enum Base64URL {
    private static let encoding: Base64.EncodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]
    private static let decoding: Base64.DecodingOptions = [.base64UrlAlphabet, .omitPaddingCharacter]

    /// Encodes `bytes` as unpadded base64url.
    public static func encode(_ bytes: some DataProtocol) -> String {
        Base64.encodeToString(bytes: Array(bytes), options: encoding)
    }

    /// Decodes unpadded base64url, or `nil` when `text` is not exactly that.
    public static func decode(_ text: some StringProtocol) -> Data? {
        let utf8 = Substring(text).utf8
        guard let bytes = try? Base64.decode(bytes: utf8, options: decoding) else { return nil }
        guard Base64.encodeToBytes(bytes: bytes, options: encoding).elementsEqual(utf8) else { return nil }
        return Data(bytes)
    }
}
