#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A C call that failed: which call and the `errno` it left, e.g. `bind failed: Address already in
/// use (errno 98)`.
public struct SystemCallError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The name of the C function, e.g. `bind`.
    public let call: String
    /// The `errno` value the call set.
    public let errorNumber: Int32

    public init(call: String, errorNumber: Int32) {
        self.call = call
        self.errorNumber = errorNumber
    }

    public var description: String {
        // glibc's strerror returns static strings for known codes; it is only racy for unknown ones.
        "\(call) failed: \(String(cString: strerror(errorNumber))) (errno \(errorNumber))"
    }
}

/// Runs a C call that signals failure by returning -1 and setting `errno`, in the style of
/// swift-nio's `NIOPosix/System.swift`: `EINTR` (a signal arrived mid-call) is retried, any other
/// failure becomes a ``SystemCallError`` named after the call.
@inlinable
public func systemCall<Result: FixedWidthInteger>(_ name: String, _ body: () -> Result) throws(SystemCallError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemCallError(call: name, errorNumber: code)
    }
}

/// Like ``systemCall(_:_:)`` for a non-blocking descriptor: returns `nil` instead of throwing when
/// the call would block (`EAGAIN`/`EWOULDBLOCK`).
@inlinable
public func nonBlockingSystemCall<Result: FixedWidthInteger>(_ name: String, _ body: () -> Result)
    throws(SystemCallError) -> Result?
{
    do {
        return try systemCall(name, body)
    } catch  where error.errorNumber == EAGAIN || error.errorNumber == EWOULDBLOCK {
        return nil
    }
}

/// Closes a descriptor. Not retried on `EINTR`: on Linux the descriptor is released even then, and
/// a retry could close a descriptor another thread has just been given.
public func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
