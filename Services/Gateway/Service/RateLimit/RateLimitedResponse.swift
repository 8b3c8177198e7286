import Foundation
import HTTPTypes
import Hummingbird

extension RateLimited {
    static let retryAfterHeader = HTTPField.Name("Retry-After")!

    /// The message every family's body carries.
    var message: String { "too many requests: try again in \(retryAfterSeconds) s" }
}
