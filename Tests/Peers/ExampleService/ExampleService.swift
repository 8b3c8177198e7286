import Bus
import Foundation
import Postgres
import ServiceKit

/// A minimal service built the way every real one is (``BusServiceMain``), so the runtime is
/// tested end to end as a process: start-up, a write with its outbox event, graceful shutdown.
enum ExampleService: ServiceDescription {
    static let name = "example"
    static let defaultRPCBind = "tcp://127.0.0.1:*"
    static let defaultEventsBind = "tcp://127.0.0.1:*"
    static let defaultHealthPort = 0

    static func migrations() throws -> [Migration] {
        [Migration(version: 100, name: "0100_notes", sql: "CREATE TABLE notes (id bigserial PRIMARY KEY, text text NOT NULL)")]
    }
}

public struct NoteRequest: Codable, Sendable {
    public var text: String
    public var delayMs: Int
}

public struct NoteReply: Codable, Sendable {
    public var id: Int64
}

enum ExampleRecord: RPCMethod {
    typealias Request = NoteRequest
    typealias Reply = NoteReply
    static let type = "example.record"
    static let cachesReply = false
}

@main
struct ExampleServiceMain {
    static func main() async {
        await BusServiceMain.run(ExampleService.self) { context in
            let (pool, outbox) = (context.pool, context.outbox)
            context.server.register(ExampleRecord.self) { request, _ in
                let id = try await pool.withTransaction { db in
                    let id = try db.query("INSERT INTO example.notes (text) VALUES ($1) RETURNING id", request.text)[0].decode(Int64.self, column: 0)
                    try outbox.append(type: "example.recorded", NoteReply(id: id), on: db)
                    return id
                }
                outbox.committed()
                // After the write, so a test can see the request is being handled (the row exists)
                // while it is still running.
                if request.delayMs > 0 { try await Task.sleep(for: .milliseconds(request.delayMs)) }
                return NoteReply(id: id)
            }
            // Tell a test harness where everything is (the binds may be ephemeral).
            context.runtime.announceReadyOnceServing()
        }
    }
}
