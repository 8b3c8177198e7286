import Crypto
import Foundation

/// SHA-256 bytes of some data (the CSP hash of the page's stylesheet).
package enum SHA256Digest {
    static func of(_ data: Data) -> [UInt8] { Array(SHA256.hash(data: data)) }
}
