import SystemCall

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a listening TCP socket on a numeric address, with the C calls of ``systemCall(_:_:)``.
///
/// Only numeric hosts (`127.0.0.1`, `0.0.0.0`, `::1`, `::`) and `localhost` are accepted: resolving a
/// name could block on DNS, and this runs while a service starts.
enum TCPListener {
    /// A socket bound to `host:port` and listening, non-blocking and close-on-exec.
    /// - Returns: the descriptor and the port actually bound (the kernel's choice when `port` is 0).
    static func open(host: String, port: Int, backlog: Int32 = 64) throws(SystemCallError) -> (
        descriptor: Int32, port: Int
    ) {
        let numericHost = host == "localhost" ? "127.0.0.1" : host
        var storage = sockaddr_storage()
        let family: Int32
        let length: socklen_t
        if let address = ipv4(numericHost, port: port) {
            family = AF_INET
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in.self) }
        } else if let address = ipv6(numericHost, port: port) {
            family = AF_INET6
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in6.self) }
        } else {
            throw SystemCallError(call: "inet_pton(\(host))", errorNumber: EINVAL)
        }

        let descriptor = try systemCall("socket") { socket(family, socketType(), 0) }
        do {
            var one: Int32 = 1
            _ = try systemCall("setsockopt(SO_REUSEADDR)") {
                setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            _ = try withUnsafePointer(to: &storage) { pointer throws(SystemCallError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemCallError) in
                    try systemCall("bind") { bind(descriptor, address, length) }
                }
            }
            _ = try systemCall("listen") { listen(descriptor, backlog) }
            try setNonBlocking(descriptor)
            return (descriptor, try boundPort(descriptor))
        } catch {
            closeDescriptor(descriptor)
            throw error
        }
    }

    static func setNonBlocking(_ descriptor: Int32) throws(SystemCallError) {
        let flags = try systemCall("fcntl(F_GETFL)") { fcntl(descriptor, F_GETFL) }
        _ = try systemCall("fcntl(F_SETFL)") { fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
    }

    /// The local port of a bound socket (`getsockname`).
    static func boundPort(_ descriptor: Int32) throws(SystemCallError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(SystemCallError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemCallError) in
                try systemCall("getsockname") { getsockname(descriptor, address, &length) }
            }
        }
        return withUnsafeBytes(of: storage) { bytes in
            // sin_port and sin6_port sit at the same offset, in network byte order.
            Int(UInt16(bigEndian: bytes.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    private static func socketType() -> Int32 {
        #if canImport(Glibc)
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            SOCK_STREAM
        #endif
    }

    private static func ipv4(_ host: String, port: Int) -> sockaddr_in? {
        var address = sockaddr_in()
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        return address
    }

    private static func ipv6(_ host: String, port: Int) -> sockaddr_in6? {
        var address = sockaddr_in6()
        guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { return nil }
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = in_port_t(port).bigEndian
        return address
    }
}
