/// One client connection of the health server and where it is in its single request.
struct HTTPConnection {
    enum Stage {
        /// Collecting the request line and headers.
        case reading([UInt8])
        /// Sending the response; `sent` bytes are out.
        case writing([UInt8], sent: Int)
        /// Response sent and our side shut down: reading and discarding until the client closes, so
        /// unread request bytes do not turn our close into a reset that destroys the response.
        case draining
    }

    let descriptor: Int32
    var stage: Stage
    /// When the connection is dropped, whatever its stage: a slow or silent client cannot hold a slot.
    var deadline: ContinuousClock.Instant

    /// The `poll` events this connection waits for.
    var events: Int16 {
        switch stage {
        case .reading, .draining: Int16(POLLIN)
        case .writing: Int16(POLLOUT)
        }
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
