import Bus
import Contracts
import Foundation
import TestSupport
import Testing

@testable import LegalService

/// Bad requests get a clear error code and change nothing: no version, no event.
@Suite struct RefusalTests {
    @Test func onlyOperatorsMayPublish() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            let before = try await legal.counts()
            let request = LegalPublish.Request(type: .privacyPolicy, version: "2.0", content: "# New\n", material: true)
            for principal in [Principal.user("u-1"), .service("accounts"), .anonymous, nil] {
                #expect(await legal.errorCode(LegalPublish.self, request, principal: principal) == .forbidden, "\(String(describing: principal))")
            }
            #expect(try await legal.counts() == before)
            #expect(try await legal.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version == "1.0")
        }
    }

    @Test func contentMustBeNonEmptyTextUnderTheLimit() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            let before = try await legal.counts()
            func publish(_ content: String, version: String = "2.0") async -> ErrorCode? {
                await legal.errorCode(
                    LegalPublish.self, .init(type: .termsOfService, version: version, content: content, material: true),
                    principal: InProcessLegal.operatorPrincipal)
            }
            #expect(await publish(String(repeating: "x", count: legalMaximumContentBytes + 1)) == .payloadTooLarge)
            #expect(await publish("") == .invalidArgument)
            #expect(await publish("  \n\n\t ") == .invalidArgument)
            #expect(await publish("# Title\u{0}") == .invalidArgument)
            for version in ["", "has space", String(repeating: "1", count: 33), "1.0\u{0}"] {
                #expect(await publish("# Fine\n", version: version) == .invalidArgument, "version \(version)")
            }
            #expect(try await legal.counts() == before)

            // Exactly the limit is accepted.
            let largest = "# Large\n" + String(repeating: "y", count: legalMaximumContentBytes - 8)
            #expect(await publish(largest, version: "3.0") == nil)
            #expect(try await legal.call(LegalVersion.self, .init(type: .termsOfService, version: "3.0")).content == largest)
        }
    }

    @Test func aVersionCannotTakeEffectRetroactively() async throws {
        try await InProcessLegal.with { legal in
            // Within the clock-skew tolerance a past effectiveAt is accepted as given.
            let recent = Date().addingTimeInterval(-10)
            let first = try await legal.publish(.privacyPolicy, "1.0", "# First\n", effectiveAt: recent)
            #expect(Milliseconds.same(first.effectiveAt, recent))
            let before = try await legal.counts()
            func publish(_ version: String, secondsAgo: TimeInterval) async -> ErrorCode? {
                await legal.errorCode(
                    LegalPublish.self,
                    .init(
                        type: .privacyPolicy, version: version, content: "# \(version)\n", effectiveAt: Date().addingTimeInterval(-secondsAgo),
                        material: true),
                    principal: InProcessLegal.operatorPrincipal)
            }
            #expect(await publish("0.9", secondsAgo: 3600) == .invalidArgument, "long ago")
            #expect(await publish("0.9", secondsAgo: 20) == .invalidArgument, "before the current version: never current")
            #expect(try await legal.counts() == before)
            #expect(await publish("1.1", secondsAgo: 1) == nil)
            #expect(try await legal.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version == "1.1")
        }
    }

    @Test func unknownTypesAndMalformedPayloadsAreInvalidArguments() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            let before = try await legal.counts()
            let cases: [(String, String)] = [
                ("legal.current", #"{"type":"cookie_policy"}"#),
                ("legal.history", #"{"type":"PRIVACY_POLICY"}"#),
                ("legal.version", #"{"type":"eula","version":"1.0"}"#),
                ("legal.publish", ##"{"type":"cookie_policy","version":"1.0","content":"# C","material":true}"##),
                ("legal.publish", ##"{"type":"privacy_policy","version":"2.0","content":"# C"}"##),
                ("legal.publish", #"{"type":"privacy_policy","version":"2.0","content":42,"material":true}"#),
                ("legal.current", #"{"type":"privacy_policy","at":"yesterday"}"#),
                ("legal.current", "[]"),
            ]
            for (type, payload) in cases {
                #expect(try await legal.rawErrorCode(type, payload) == .invalidArgument, "\(type) \(payload)")
            }
            // A well-formed raw request works, so the above failed for their payloads alone.
            #expect(try await legal.rawErrorCode("legal.current", #"{"type":"privacy_policy"}"#) == nil)
            #expect(try await legal.counts() == before)
        }
    }

    @Test func invalidUTF8ContentIsRefused() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            let before = try await legal.counts()
            var payload = Data(##"{"type":"privacy_policy","version":"2.0","material":true,"content":"# Bad "##.utf8)
            payload.append(contentsOf: [0xC3, 0x28, 0xFF])
            payload.append(contentsOf: Data(#""}"#.utf8))
            let request = Envelope(kind: .request, type: LegalPublish.type, principal: InProcessLegal.operatorPrincipal, payload: payload)
            let reply = try await legal.client.send(request, timeout: .seconds(10)).envelope
            #expect(reply.error?.code == .invalidArgument, "\(String(describing: reply.error))")
            #expect(try await legal.counts() == before)
        }
    }
}
