import Testing

@testable import GatewayService

/// Client addresses behind trusted proxies, and W3C trace context parsing.
struct AddressAndTraceTests {
    @Test func forwardedForIsBelievedOnlyFromTrustedProxies() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "2001:db8::/32", "127.0.0.1"])
        // A direct client: its own address, whatever it claims.
        #expect(proxies.clientAddress(peer: "198.51.100.7", forwardedFor: ["1.2.3.4"]) == "198.51.100.7")
        // Through a trusted proxy: the rightmost untrusted hop.
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["6.6.6.6, 203.0.113.9, 10.0.0.5"]) == "203.0.113.9")
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["6.6.6.6", "203.0.113.9"]) == "203.0.113.9")
        // Garbage stops the walk at the last good address.
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwardedFor: ["evil, not-an-ip"]) == "10.1.2.3")
        // IPv6 and IPv4-mapped peers.
        #expect(proxies.clientAddress(peer: "2001:db8::1", forwardedFor: ["2001:0db8:0000::2, 192.0.2.1"]) == "192.0.2.1")
        #expect(proxies.clientAddress(peer: "::ffff:127.0.0.1", forwardedFor: ["192.0.2.44"]) == "192.0.2.44")
        #expect(proxies.clientAddress(peer: nil, forwardedFor: ["192.0.2.44"]) == nil)
        #expect(throws: TrustedProxies.InvalidBlock.self) { try TrustedProxies(["10.0.0.0/33"]) }
        #expect(throws: TrustedProxies.InvalidBlock.self) { try TrustedProxies(["proxy.example"]) }
    }

    /// HSTS goes only with what a trusted proxy says came over HTTPS.
    @Test func httpsIsBelievedOnlyFromTrustedProxies() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8"])
        let https = { (proto: String?, peer: String?) in
            StrictTransportSecurityMiddleware.arrivedOverHTTPS(forwardedProto: proto, peer: peer, trustedProxies: proxies)
        }
        #expect(https("https", "10.1.2.3") && https("HTTPS", "10.1.2.3") && https("https, http", "10.1.2.3"))
        #expect(!https("http", "10.1.2.3") && !https(nil, "10.1.2.3") && !https("http, https", "10.1.2.3"))
        // A client claiming it itself, or an unknown peer, is not believed.
        #expect(!https("https", "198.51.100.7") && !https("https", nil))
    }

    @Test func traceparentIsKeptWhenValidAndMadeOtherwise() {
        let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let joined = TraceContext(incoming: incoming)
        #expect(joined.traceID == "4bf92f3577b34da6a3ce929d0e0e4736" && joined.flags == "01")
        #expect(joined.spanID != "00f067aa0ba902b7" && joined.spanID.count == 16)
        #expect(joined.header == "00-4bf92f3577b34da6a3ce929d0e0e4736-\(joined.spanID)-01")
        for bad in [
            "", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            let fresh = TraceContext(incoming: bad)
            #expect(fresh.traceID != "4bf92f3577b34da6a3ce929d0e0e4736" && fresh.traceID.count == 32 && fresh.flags == "01", "\(bad)")
        }
        // A later version may carry more fields.
        #expect(TraceContext(incoming: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more").traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
    }
}
