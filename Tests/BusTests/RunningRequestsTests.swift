import Foundation
import Testing

@testable import Bus

/// The server's table of running requests, without sockets.
@Suite struct RunningRequestsTests {
    let id = UUID()

    func request(route: UInt8 = 1, payload: String = "{}", principal: Principal? = nil, type: String = "t.read") -> RunningRequests.Request {
        .init(type: type, principal: principal, peer: "gateway", payload: Data(payload.utf8), attachments: [], route: [Data([route])])
    }

    @Test func aRetryJoinsTheRunAndEachOtherSenderIsAnsweredOnce() {
        var table = RunningRequests()
        #expect(table.admit(id, request()) == .run)
        #expect(table.admit(id, request()) == .joined, "the same connection again")
        #expect(table.admit(id, request(route: 2)) == .joined)
        #expect(table.admit(id, request(route: 2)) == .joined)
        #expect(table.admit(UUID(), request()) == .run, "another id runs")
        #expect(table.finish(id) == [[Data([2])]], "the first sender gets the run's own reply; a second, one copy")
        #expect(table.count == 1)
        #expect(table.admit(id, request()) == .run, "an ended run's id is free")
    }

    @Test func anythingButTheSameRequestUnderARunningIdConflicts() {
        var table = RunningRequests()
        #expect(table.admit(id, request()) == .run)
        #expect(table.admit(id, request(payload: "{\"a\":1}")) == .conflict)
        #expect(table.admit(id, request(principal: .user("u1"))) == .conflict)
        #expect(table.admit(id, request(type: "t.other")) == .conflict)
        var otherPeer = request()
        otherPeer.peer = "documents"
        #expect(table.admit(id, otherPeer) == .conflict)
        var withAttachment = request()
        withAttachment.attachments = [Data([9])]
        #expect(table.admit(id, withAttachment) == .conflict)
        #expect(table.finish(id).isEmpty)
    }

    @Test func joinedSendersAreBounded() {
        var table = RunningRequests()
        #expect(table.admit(id, request(route: 0)) == .run)
        for route in 1...50 { #expect(table.admit(id, request(route: UInt8(route))) == .joined) }
        #expect(table.finish(id).count == RunningRequests.maximumJoined)
    }
}
