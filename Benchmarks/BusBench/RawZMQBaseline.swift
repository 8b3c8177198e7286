import Bus
import CZeroMQ
import Foundation
import Locks
import Synchronization

/// Raw libzmq round trips, DEALER to a ROUTER echo, on plain threads with blocking calls: the
/// ceiling the envelope RPC is measured against, with the same message size.
enum RawZMQBaseline {
    /// Round trips per second over `seconds`, with `inFlight` requests outstanding, and the number
    /// of round trips made in all (warm-up and drain included).
    static func run(endpoint: String, messageSize: Int, inFlight: Int, seconds: Double) -> (rate: Double, roundTrips: Int) {
        // The echo server owns its context and socket on its own thread (raw pointers are not
        // Sendable, and a socket must stay on one thread anyway).
        let stop = Stop()
        let server = Thread {
            let context = zmq_ctx_new()!
            let router = zmq_socket(context, ZMQ_ROUTER)!
            configure(router)
            precondition(zmq_bind(router, endpoint) == 0, "bind \(endpoint)")
            stop.publish(endpoint: lastEndpoint(router))
            let message = UnsafeMutablePointer<zmq_msg_t>.allocate(capacity: 1)
            defer { message.deallocate() }
            var timeout: Int32 = 100
            zmq_setsockopt(router, ZMQ_RCVTIMEO, &timeout, 4)
            // Echo: receive [id][empty][body], send the same frames back.
            while !stop.isSet {
                zmq_msg_init(message)
                guard zmq_msg_recv(message, router, 0) >= 0 else {
                    zmq_msg_close(message)
                    continue
                }
                var more = zmq_msg_more(message) != 0
                zmq_msg_send(message, router, more ? ZMQ_SNDMORE : 0)
                while more {
                    zmq_msg_init(message)
                    zmq_msg_recv(message, router, 0)
                    more = zmq_msg_more(message) != 0
                    zmq_msg_send(message, router, more ? ZMQ_SNDMORE : 0)
                }
            }
            zmq_close(router)
            zmq_ctx_term(context)
            stop.serverDone()
        }
        server.start()
        let bound = stop.waitForEndpoint()

        let context = zmq_ctx_new()!
        defer { zmq_ctx_term(context) }
        let dealer = zmq_socket(context, ZMQ_DEALER)!
        configure(dealer)
        zmq_connect(dealer, bound)
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: messageSize)
        let reply = UnsafeMutableRawPointer.allocate(byteCount: messageSize + 64, alignment: 8)
        defer { reply.deallocate() }
        func sendOne() {
            zmq_send(dealer, nil, 0, ZMQ_SNDMORE)
            _ = body.withUnsafeBytes { zmq_send(dealer, $0.baseAddress, $0.count, 0) }
        }
        func receiveOne() {
            zmq_recv(dealer, reply, messageSize + 64, 0)  // empty delimiter
            zmq_recv(dealer, reply, messageSize + 64, 0)  // body
        }
        // Warm up the connection.
        sendOne()
        receiveOne()
        for _ in 0..<inFlight { sendOne() }
        var completed = 0
        let start = ContinuousClock.now
        let end = start + .milliseconds(Int(seconds * 1000))
        while true {
            receiveOne()
            completed += 1
            if completed % 256 == 0, ContinuousClock.now >= end { break }
            sendOne()
        }
        let elapsed = ContinuousClock.now - start
        for _ in 0..<(inFlight - 1) { receiveOne() }
        zmq_close(dealer)
        stop.set()
        stop.waitForServer()
        return (Double(completed) / elapsed.inSeconds, completed + inFlight)
    }

    private static func configure(_ socket: UnsafeMutableRawPointer) {
        var linger: Int32 = 0
        var hwm: Int32 = 100_000
        zmq_setsockopt(socket, ZMQ_LINGER, &linger, 4)
        zmq_setsockopt(socket, ZMQ_SNDHWM, &hwm, 4)
        zmq_setsockopt(socket, ZMQ_RCVHWM, &hwm, 4)
    }

    private static func lastEndpoint(_ socket: UnsafeMutableRawPointer) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        var size = buffer.count
        zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, &buffer, &size)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A flag, the server's endpoint and two semaphores shared between the benchmark's threads.
final class Stop: Sendable {
    private let flag = Atomic<Bool>(false)
    private let endpoint = LockedValue<String>("")
    private let ready = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    func publish(endpoint: String) {
        self.endpoint.withLock { $0 = endpoint }
        ready.signal()
    }
    func waitForEndpoint() -> String {
        ready.wait()
        return endpoint.withLock { $0 }
    }
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
    func serverDone() { done.signal() }
    func waitForServer() { done.wait() }
}
