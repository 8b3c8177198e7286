import Foundation
import Logging

/// Messages a loop has taken from its queue but not yet handed to libzmq, oldest first.
struct OutgoingBuffer {
    private var messages: [OutgoingMessage] = []
    private var head = 0

    var isEmpty: Bool { head == messages.count }

    mutating func append(contentsOf more: [OutgoingMessage]) {
        messages.append(contentsOf: more)
    }

    /// Sends as many messages as the socket takes. Under `.wait` the first blocked message stops
    /// the flush (order is kept); under `.drop` it is dropped and the flush goes on. Messages past
    /// their deadline are dropped unsent.
    /// Returns how many messages libzmq took.
    @discardableResult
    mutating func flush(
        through socket: ZMQSocket, policy: BlockedSendPolicy,
        onDropped: (OutgoingMessage, ZMQError?) -> Void, logger: Logger
    ) -> Int {
        var sent = 0
        let now = ContinuousClock.now
        while head < messages.count {
            let message = messages[head]
            if let expiry = message.expiresAt, expiry < now {
                onDropped(message, nil)
                head += 1
                continue
            }
            do {
                if try socket.send(message.content) {
                    head += 1
                    sent += 1
                } else if policy == .drop {
                    onDropped(message, nil)
                    head += 1
                } else {
                    break
                }
            } catch {
                // EHOSTUNREACH: a ROUTER reply to a peer that has gone (ROUTER_MANDATORY).
                onDropped(message, error)
                head += 1
                if error.isTerminated { break }
            }
        }
        if head == messages.count {
            messages.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 {
            messages.removeFirst(head)
            head = 0
        }
        return sent
    }
}
