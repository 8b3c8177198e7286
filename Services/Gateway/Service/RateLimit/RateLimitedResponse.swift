import Foundation
import HTTPTypes
import Hummingbird

extension RateLimited {
    package static let retryAfterHeader = HTTPField.Name("Retry-After")!

    /// The message every family's body carries.
    package var message: String { "too many requests: try again in \(retryAfterSeconds) s" }
}
