import Bus
import Testing

@testable import ServiceKit

/// `BUS_EVENT_LOOP`, as a service reads it at start (`BusSettings`): a known word in any case, the
/// per-socket default when unset, and a clear refusal that names the variable and the choices.
@Suite struct BusEventLoopSettingTests {
    private func settings(_ values: [String: String]) throws -> BusSettings {
        try BusSettings(defaultRPCBind: "tcp://127.0.0.1:0", defaultEventsBind: "tcp://127.0.0.1:0", environment: EnvironmentReader(values))
    }

    @Test func unsetIsPerSocketAndEitherWordIsRead() throws {
        #expect(try settings([:]).eventLoop == .perSocket)
        #expect(try settings(["BUS_EVENT_LOOP": "single"]).eventLoop == .single)
        #expect(try settings(["BUS_EVENT_LOOP": "Per-Socket"]).eventLoop == .perSocket)
    }

    @Test func anUnknownModeIsRefusedNamingTheChoices() throws {
        let error = #expect(throws: ConfigurationError.self) { try settings(["BUS_EVENT_LOOP": "one"]) }
        #expect(error?.variable == "BUS_EVENT_LOOP")
        #expect(error?.value == "one")
        #expect(error?.expected == "one of single, per-socket")
    }
}
