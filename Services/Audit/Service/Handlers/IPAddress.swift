import Foundation

#if canImport(Glibc)
    import Glibc
#endif

enum IPAddress {
    /// True for a textual IPv4 or IPv6 address (as `inet_pton` reads them).
    static func isValid(_ text: String) -> Bool {
        guard text.utf8.count <= 64 else { return false }
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
