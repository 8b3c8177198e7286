import Foundation

/// Which peers may tell us the client's address through `X-Forwarded-For`.
///
/// The client IP is the connection's peer address, unless that peer is a trusted proxy: then the
/// `X-Forwarded-For` list is read from the right (each proxy appends the address it saw), skipping
/// trusted proxies, and the first address that is not one is the client. A malformed entry stops
/// the walk at the last address known good, so a client cannot smuggle a made-up address past a
/// proxy that appends to what it received.
public struct TrustedProxies: Sendable {
    let blocks: [AddressBlock]

    public struct InvalidBlock: Error { public let text: String }

    public init(_ texts: [String]) throws {
        blocks = try texts.map { text in
            guard let block = AddressBlock(text) else { throw InvalidBlock(text: text) }
            return block
        }
    }

    func isTrusted(_ address: IPAddressBytes) -> Bool { blocks.contains { $0.contains(address) } }

    /// Whether the connection's peer is a trusted proxy (whose forwarded headers are believed).
    func trusts(peer: String?) -> Bool { peer.flatMap { IPAddressBytes($0) }.map(isTrusted) ?? false }

    /// The client address for a connection from `peer` carrying `forwardedFor` (every
    /// `X-Forwarded-For` field value, in order); nil when the peer address is unknown.
    public func clientAddress(peer: String?, forwardedFor: [String]) -> String? {
        guard let peerText = peer, let peerAddress = IPAddressBytes(peerText) else { return nil }
        var client = peerAddress
        guard isTrusted(client) else { return client.text }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard let address = IPAddressBytes(hop) else { break }
            client = address
            if !isTrusted(address) { break }
        }
        return client.text
    }
}
