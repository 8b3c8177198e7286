import Foundation

/// Base64url without padding (RFC 7515 §2), the encoding of every JWS segment.
///
/// Decoding is strict: only the url-safe alphabet, no `=` padding, no whitespace, no length that
/// cannot come from whole bytes, and no set bits after the last whole byte. A lenient decoder
/// would let one token have many spellings.
///
/// Both directions work on bytes with a table: every session token is decoded twice on each
/// authenticated request (gateway and Accounts), and the Foundation round trip through standard
/// base64 and `replacingOccurrences` cost more than the Ed25519 check itself (measured with
/// `perf` under `deploy/bench-gateway`).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each byte's 6-bit value, or 0xFF for a byte outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// Encodes `bytes` as unpadded base64url.
    public static func encode(_ bytes: some DataProtocol) -> String {
        let input = Array(bytes)
        let count = input.count
        return String(unsafeUninitializedCapacity: (count * 4 + 2) / 3) { output in
            var out = 0
            var index = 0
            while index + 3 <= count {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output[out] = alphabet[Int(chunk >> 18 & 63)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 63)]
                output[out + 2] = alphabet[Int(chunk >> 6 & 63)]
                output[out + 3] = alphabet[Int(chunk & 63)]
                out += 4
                index += 3
            }
            switch count - index {
            case 1:
                let chunk = UInt32(input[index]) << 16
                output[out] = alphabet[Int(chunk >> 18 & 63)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 63)]
                out += 2
            case 2:
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
                output[out] = alphabet[Int(chunk >> 18 & 63)]
                output[out + 1] = alphabet[Int(chunk >> 12 & 63)]
                output[out + 2] = alphabet[Int(chunk >> 6 & 63)]
                out += 3
            default: break
            }
            return out
        }
    }

    /// Decodes unpadded base64url, or `nil` when `text` is not exactly that.
    public static func decode(_ text: some StringProtocol) -> Data? {
        let utf8 = Substring(text).utf8
        if let decoded = utf8.withContiguousStorageIfAvailable({ decode($0) }) { return decoded }
        return Array(utf8).withUnsafeBufferPointer { decode($0) }
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>) -> Data? {
        let count = input.count
        let tail = count % 4
        guard tail != 1 else { return nil }
        var output = Data(count: count / 4 * 3 + max(tail - 1, 0))
        let decoded: Bool = output.withUnsafeMutableBytes { raw in
            let out = raw.bindMemory(to: UInt8.self)
            var index = 0
            var position = 0
            while index + 4 <= count {
                let a = values[Int(input[index])]
                let b = values[Int(input[index + 1])]
                let c = values[Int(input[index + 2])]
                let d = values[Int(input[index + 3])]
                guard (a | b | c | d) & 0xC0 == 0 else { return false }  // 0xFF (not in the alphabet) has these bits
                let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                out[position] = UInt8(truncatingIfNeeded: chunk >> 16)
                out[position + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                out[position + 2] = UInt8(truncatingIfNeeded: chunk)
                position += 3
                index += 4
            }
            switch tail {
            case 2:
                let a = values[Int(input[index])]
                let b = values[Int(input[index + 1])]
                // Canonical only: the 4 bits after the last whole byte must be zero.
                guard (a | b) & 0xC0 == 0, b & 0x0F == 0 else { return false }
                out[position] = a << 2 | b >> 4
            case 3:
                let a = values[Int(input[index])]
                let b = values[Int(input[index + 1])]
                let c = values[Int(input[index + 2])]
                guard (a | b | c) & 0xC0 == 0, c & 0x03 == 0 else { return false }
                out[position] = a << 2 | b >> 4
                out[position + 1] = b << 4 | c >> 2
            default: break
            }
            return true
        }
        return decoded ? output : nil
    }
}
