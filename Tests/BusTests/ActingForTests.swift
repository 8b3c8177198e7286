import Foundation
import Logging
import Testing

@testable import Bus

/// The one authorization rule every service applies (`BusRequestContext+Authorization.swift`),
/// row by row, without sockets.
@Suite struct ActingForTests {
    let user = UUID()
    let other = UUID()

    /// A handler's context for `principal` on a server whose allow-list is `allowed`.
    func context(_ principal: Principal, allowed: Set<String>? = ["gateway"]) -> BusRequestContext {
        BusRequestContext(
            envelope: Envelope(kind: .request, type: "t.read"), peer: nil, principal: principal, attachments: [],
            servicesActingForUsers: allowed, logger: Logger(label: "test"))
    }

    /// The code `body` throws, or nil when it does not.
    func refusal(_ body: () throws -> Void) -> ErrorCode? {
        do {
            try body()
            return nil
        } catch let error as BusError {
            return error.code
        } catch {
            Issue.record("not a BusError: \(error)")
            return nil
        }
    }

    @Test("a user acts for itself, whatever the case of its id, and no one else")
    func userForItself() throws {
        for id in [user.uuidString.lowercased(), user.uuidString] {
            let context = context(.user(id))
            #expect(try context.actingFor == .user(user))
            #expect(refusal { try context.authorize(actingFor: user) } == nil)
            #expect(refusal { try context.authorize(actingFor: other) } == .forbidden)
        }
    }

    @Test("operators and the services on the allow-list act for anyone")
    func operatorsAndAllowedServices() throws {
        for principal in [Principal.operator("operator"), .service("gateway")] {
            let context = context(principal)
            #expect(try context.actingFor == .anyone)
            #expect(refusal { try context.authorize(actingFor: user) } == nil)
            #expect(refusal { try context.authorize(actingFor: other) } == nil)
            #expect(refusal { try context.requireUserAccess() } == nil)
        }
    }

    @Test("a service not on the allow-list, or unknown to it, acts for no user: forbidden")
    func servicesOffTheList() {
        for principal in [Principal.service("legal"), .service("nobody-we-know")] {
            let context = context(principal)
            #expect(context.isServiceWithoutUserAccess)
            #expect(refusal { _ = try context.actingFor } == .forbidden)
            #expect(refusal { try context.authorize(actingFor: user) } == .forbidden)
            #expect(refusal { try context.requireUserAccess() } == .forbidden)
        }
    }

    @Test("without an allow-list (a plaintext bus) every service acts for anyone")
    func noAllowList() throws {
        let context = context(.service("legal"), allowed: nil)
        #expect(!context.isServiceWithoutUserAccess)
        #expect(try context.actingFor == .anyone)
    }

    @Test("no principal, an empty id or a user id that is not a UUID is unauthenticated")
    func unidentified() {
        let principals: [Principal] = [.anonymous, Principal(.anonymous, "someone"), .user(""), .operator(""), .service(""), .user("alice")]
        for principal in principals {
            let context = context(principal)
            #expect(refusal { _ = try context.actingFor } == .unauthenticated, "\(principal)")
            #expect(refusal { try context.authorize(actingFor: user) } == .unauthenticated, "\(principal)")
        }
    }
}
