import CZeroMQ
import SystemCall

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed call of the transport: a libzmq call, or one of the POSIX calls of the socket loop
/// (`eventfd`, `poll`), with the call's name and the `errno` it left, so a log line says what
/// failed and why.
public struct ZMQError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The function that failed, e.g. `"zmq_bind(tcp://127.0.0.1:5551)"`.
    public let call: String
    /// The value of `zmq_errno()` (or `errno`) right after the failure.
    public let errno: Int32

    init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// A POSIX call of the loop that failed (``systemCall(_:_:)``), in the transport's terms.
    init(_ failed: SystemCallError) {
        self.init(call: failed.call, errno: failed.errorNumber)
    }

    public var description: String {
        "\(call) failed: \(String(cString: zmq_strerror(errno))) (errno \(errno))"
    }

    /// The socket would have blocked (`EAGAIN`): not a failure of the socket itself.
    var wouldBlock: Bool { errno == EAGAIN }
    /// The context was terminated: every further call on its sockets fails the same way.
    var isTerminated: Bool { errno == ETERM }
}

/// Every libzmq call returning an `Int32` goes through here: `EINTR` is retried (a signal arrived
/// mid-call), any other negative return becomes a ``ZMQError`` naming the call.
@inline(__always)
@discardableResult
func zmqCall(_ name: @autoclosure () -> String, _ body: () -> Int32) throws(ZMQError) -> Int32 {
    while true {
        let rc = body()
        if rc >= 0 { return rc }
        let err = zmq_errno()
        if err == EINTR { continue }
        throw ZMQError(call: name(), errno: err)
    }
}

/// The same for calls that return a pointer (`zmq_ctx_new`, `zmq_socket`): `nil` is the failure.
@inline(__always)
func zmqCall<P>(_ name: @autoclosure () -> String, _ body: () -> P?) throws(ZMQError) -> P {
    guard let pointer = body() else { throw ZMQError(call: name(), errno: zmq_errno()) }
    return pointer
}
