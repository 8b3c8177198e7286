import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An `inet` (or `cidr`) value: an IPv4 or IPv6 address with an optional prefix length, kept as
/// PostgreSQL prints it (`192.0.2.1`, `10.0.0.0/8`, `2001:db8::1`).
///
/// A small value type rather than a full address library: services store client IPs and
/// compare them, nothing more.
public struct PostgresInet: Sendable, Hashable, CustomStringConvertible, PostgresEncodable,
    PostgresDecodable
{
    /// 4 bytes for IPv4, 16 for IPv6.
    public let address: [UInt8]
    /// Network prefix length: 32/128 for a single host.
    public let prefixLength: Int

    /// Parses `192.0.2.1`, `2001:db8::1`, optionally with `/prefix`. `nil` if malformed.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let host = String(parts[0])
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            address = withUnsafeBytes(of: &v4) { [UInt8]($0) }
        } else if inet_pton(AF_INET6, host, &v6) == 1 {
            address = withUnsafeBytes(of: &v6) { [UInt8]($0) }
        } else {
            return nil
        }
        let maximum = address.count * 8
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...maximum).contains(prefix) else { return nil }
            prefixLength = prefix
        } else {
            prefixLength = maximum
        }
    }

    init(address: [UInt8], prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    public var isIPv6: Bool { address.count == 16 }

    /// The address, with `/prefix` unless it is a single host.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = isIPv6 ? AF_INET6 : AF_INET
        let host = address.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)).map { _ in
                String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            } ?? ""
        }
        return prefixLength == address.count * 8 ? host : "\(host)/\(prefixLength)"
    }

    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: description, typeOID: PostgresTypeOID.inet)
    }

    /// Binary `inet`/`cidr`: family (2 = IPv4, 3 = IPv6), bits, is_cidr, length, address.
    public static func decode(from cell: PostgresCell) throws -> PostgresInet {
        let b = try cell.nonNull(PostgresInet.self)
        guard cell.typeOID == PostgresTypeOID.inet || cell.typeOID == PostgresTypeOID.cidr,
            b.count >= 4, b[3] == 4 || b[3] == 16, b.count == 4 + Int(b[3])
        else { throw cell.mismatch(PostgresInet.self) }
        return PostgresInet(address: [UInt8](b[4...]), prefixLength: Int(b[1]))
    }
}
