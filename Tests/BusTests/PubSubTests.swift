import Foundation
import TestSupport
import Testing

@testable import Bus

@Suite struct PubSubTests {
    let logger = testLogger()

    @Test func subscriberGetsItsTopicsInOrder() async throws {
        let publisher = try await EventPublisher.bind(name: "legal", endpoints: ["tcp://127.0.0.1:*"], logger: logger)
        let subscriber = try await EventSubscriber.connect(endpoints: publisher.boundEndpoints, topics: ["legal.published"], logger: logger)
        // Slow joiner: the subscription takes a moment to reach the publisher.
        for _ in 0..<100 where !subscriber.isConnected { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(200))
        for sequence in 1...500 {
            try publisher.publish(type: "legal.published", ["version": "\(sequence)"], sequence: Int64(sequence))
            try publisher.publish(type: "account.deleted", ["id": "x"])
        }
        let received = try await withTimeout(.seconds(20), "500 events") {
            var received: [Int64] = []
            for await event in subscriber {
                #expect(event.topic == "legal.published")
                received.append(event.envelope.sequence ?? -1)
                if received.count == 500 { break }
            }
            return received
        }
        #expect(received == Array(1...500))
        await subscriber.close()
        await publisher.close()
    }

    @Test func curvePublisherRefusesUnknownSubscribers() async throws {
        let serverKeys = try CurveKeyPair.generate()
        let admitted = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let publisher = try await EventPublisher.bind(
            name: "audit", endpoints: ["tcp://127.0.0.1:*"],
            security: .curve(serverKeys, admitted: ZAPPolicy(admitted: [admitted.publicKey: "accounts"])), logger: logger)
        let good = try await EventSubscriber.connect(
            endpoints: publisher.boundEndpoints, topics: [""], security: .curve(admitted, serverPublicKey: serverKeys.publicKey), logger: logger)
        let bad = try await EventSubscriber.connect(
            endpoints: publisher.boundEndpoints, topics: [""], security: .curve(stranger, serverPublicKey: serverKeys.publicKey), logger: logger)
        for _ in 0..<100 where !good.isConnected { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(good.isConnected)
        #expect(!bad.isConnected)
        await good.close()
        await bad.close()
        await publisher.close()
    }
}
