import Postgres
import TestSupport
import Testing

@Suite("Large objects")
struct LargeObjectTests {
    static func pattern(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset &* 31 &+ offset >> 8) }

    @Test("write in chunks, then seek, tell, read, truncate and unlink with 64-bit offsets")
    func multiMegabyte() async throws {
        try await TestDatabase.withSchema { db in
            let size = 5 * 1024 * 1024 + 123
            let chunk = 64 * 1024
            let oid = try await db.pool.withTransaction { c in
                let oid = try c.createLargeObject()
                let object = try c.openLargeObject(oid, mode: .write)
                var offset = 0
                while offset < size {
                    let count = min(chunk, size - offset)
                    #expect(try object.write((offset..<offset + count).map(Self.pattern)) == count)
                    offset += count
                }
                #expect(try object.tell() == Int64(size))
                try object.close()
                return oid
            }
            try await db.pool.withTransaction { c in
                let object = try c.openLargeObject(oid, mode: .readWrite)
                #expect(try object.size() == Int64(size))
                let positions = [0, 1, 65_535, 65_536, 3 * 1024 * 1024 + 7, size - 10]
                for position in positions {
                    #expect(try object.seek(to: Int64(position)) == Int64(position))
                    let bytes = try object.read(upTo: 10)
                    #expect(bytes == (position..<min(position + 10, size)).map(Self.pattern))
                    #expect(try object.tell() == Int64(position + bytes.count))
                }
                #expect(try object.seek(to: -5, from: .end) == Int64(size - 5))
                #expect(try object.read(upTo: 100).count == 5)
                #expect(try object.read(upTo: 100).isEmpty)
                #expect(try object.seek(to: -10, from: .current) == Int64(size - 10))
                try object.truncate(to: 3 * 1024 * 1024)
                #expect(try object.seek(to: 0, from: .end) == 3 * 1024 * 1024)
                // Seeking past the end and writing leaves a zero-filled hole.
                try object.seek(to: 4 * 1024 * 1024)
                try object.write([1, 2, 3])
                #expect(try object.size() == 4 * 1024 * 1024 + 3)
                try object.seek(to: 3 * 1024 * 1024 + 100)
                #expect(try object.read(upTo: 4) == [0, 0, 0, 0])
            }
            try await db.pool.withTransaction { c in try c.unlinkLargeObject(oid) }
            await #expect(throws: PostgresError.self) {
                try await db.pool.withTransaction { c in _ = try c.openLargeObject(oid, mode: .read) }
            }
        }
    }

    @Test("large objects outside a transaction are refused with a clear error")
    func needsTransaction() async throws {
        try await TestDatabase.withSchema { db in
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in _ = try c.createLargeObject() }
            }
            #expect(error?.kind == .usage)
            #expect(error?.operation == "lo_creat")
        }
    }

    @Test("a rolled-back transaction leaves no large object behind")
    func rollback() async throws {
        struct Abort: Error {}
        try await TestDatabase.withSchema { db in
            let created = Locked<UInt32?>(nil)
            await #expect(throws: Abort.self) {
                try await db.pool.withTransaction { c in
                    let oid = try c.createLargeObject()
                    created.withLock { $0 = oid }
                    try c.openLargeObject(oid).write([1, 2, 3])
                    throw Abort()
                }
            }
            let oid = try #require(created.value)
            let exists = try await db.pool.withConnection { c in
                try c.query("SELECT EXISTS (SELECT 1 FROM pg_largeobject_metadata WHERE oid = $1::oid)", Int(oid))[0]
                    .decode(Bool.self, column: 0)
            }
            #expect(exists == false)
        }
    }
}
