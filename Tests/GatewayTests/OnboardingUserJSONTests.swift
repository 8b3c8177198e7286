import Contracts
import Foundation
import TestSupport
import Testing

@testable import BusCore
@testable import GatewayService

/// The seed's user JSON is written by hand on the acceptance path (``HandEncodedJSON``): it must
/// be byte for byte what its `Encodable` conformance writes through Foundation, for every shape of
/// user (absent fields as `null`, the nil id of a sign-in without an account, text that needs
/// escapes). No stack needed.
@Suite struct OnboardingUserJSONTests {
    func text(_ r: inout SplitMix64) -> String { r.text(maxLength: 24) }

    func maybe<T>(_ r: inout SplitMix64, _ make: (inout SplitMix64) -> T) -> T? {
        Bool.random(using: &r) ? make(&r) : nil
    }

    @Test func theHandWrittenUserIsFoundationsBytes() throws {
        var r = SplitMix64(seed: 4)
        func date(_ r: inout SplitMix64) -> Date { Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_102_444_800_000, using: &r)) / 1000) }
        for _ in 0..<500 {
            let user = AccountUser(
                id: maybe(&r) { _ in UUID() }, appleId: text(&r), email: maybe(&r, text), name: maybe(&r, text),
                username: maybe(&r, text), state: maybe(&r) { _ in "NY" }, eligibilityConfirmedAt: maybe(&r, date),
                tosVersion: maybe(&r, text), tosAcceptedAt: maybe(&r, date), createdAt: maybe(&r, date),
                eligibilityRulesVersion: maybe(&r, text), hasConfirmedEligibility: .random(using: &r), hasAcceptedTOS: .random(using: &r),
                needsToAcceptTOS: .random(using: &r))
            let json = OnboardingUserJSON(user: user)
            let foundation = try BusJSON.encoder().encode(json)
            let hand = BusJSON.handEncoded(json)
            #expect(hand == foundation, "\(hand.map { String(decoding: $0, as: UTF8.self) } ?? "threw")")
            // What the routes send.
            #expect(try BusJSON.encodeBytes(json) == Array(foundation))
        }
    }

    /// The acceptance's body is read by hand too, and leaves what it does not expect to
    /// `Decodable` (whose error the route turns into its 400).
    @Test func theAcceptBodyReadsAsDecodableReadsIt() throws {
        for body in [#"{"tos_version":"2025-09-01"}"#, #" { "extra" : [1], "tos_version" : "v\u00e9" } "#, #"{"tos_version":""}"#] {
            let data = Data(body.utf8)
            let foundation = try BusJSON.decoder().decode(OnboardingRoutes.AcceptBody.self, from: data)
            #expect(BusJSON.handDecoded(OnboardingRoutes.AcceptBody.self, from: data)?.tos_version == foundation.tos_version)
            #expect(try BusJSON.decode(OnboardingRoutes.AcceptBody.self, from: data).tos_version == foundation.tos_version)
        }
        for body in [#"{"tos_version":1}"#, #"{}"#, #"{"tos_version":null}"#, #"[]"#, #"{"\u0074os_version":"1"}"#] {
            let data = Data(body.utf8)
            #expect(BusJSON.handDecoded(OnboardingRoutes.AcceptBody.self, from: data) == nil, "\(body)")
            let foundation = try? BusJSON.decoder().decode(OnboardingRoutes.AcceptBody.self, from: data)
            #expect((try? BusJSON.decode(OnboardingRoutes.AcceptBody.self, from: data))?.tos_version == foundation?.tos_version)
        }
    }
}
