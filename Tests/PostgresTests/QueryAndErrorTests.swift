import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Queries and errors")
struct QueryAndErrorTests {
    @Test("parameters that look like SQL are stored verbatim")
    func injectionIsInert() async throws {
        try await TestDatabase.withSchema { db in
            let hostile = [
                "'); DROP TABLE notes; --", "$1", "\\'; SELECT 1; --", "Robert'); DELETE FROM notes;--",
                "x\n; TRUNCATE notes;\n--", "E'\\x41'",
            ]
            let stored = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)")
                for text in hostile { try c.execute("INSERT INTO notes (body) VALUES ($1)", text) }
                return try c.query("SELECT body FROM notes ORDER BY id").map { try $0.decode(String.self, column: 0) }
            }
            #expect(stored == hostile)
        }
    }

    @Test("server errors carry SQLSTATE, message, detail and constraint; unique violations are recognised")
    func uniqueViolation() async throws {
        try await TestDatabase.withSchema { db in
            try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE users (email text CONSTRAINT users_email_key UNIQUE)")
                try c.execute("INSERT INTO users VALUES ($1)", "a@example.com")
            }
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in try c.execute("INSERT INTO users VALUES ($1)", "a@example.com") }
            }
            #expect(error?.isUniqueViolation == true)
            #expect(error?.sqlState == "23505")
            #expect(error?.constraint == "users_email_key")
            #expect(error?.table == "users")
            #expect(error?.detail?.contains("a@example.com") == true)
            #expect(error?.message.contains("duplicate key") == true)
            #expect(error?.operation == "PQexecParams")
            #expect(error?.isConnectionFailure == false)
            // The connection stays usable after a server error.
            let count = try await db.pool.withConnection { c in try c.query("SELECT count(*) FROM users")[0].decode(Int.self, column: 0) }
            #expect(count == 1)
        }
    }

    @Test("syntax errors, NOT NULL violations and hints are reported with their fields")
    func otherErrors() async throws {
        try await TestDatabase.withSchema { db in
            let syntax = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in try c.query("SELEC 1") }
            }
            #expect(syntax?.sqlState == "42601")
            #expect(syntax?.isUniqueViolation == false)
            let notNull = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in
                    try c.executeScript("CREATE TABLE t (v text NOT NULL)")
                    try c.execute("INSERT INTO t VALUES ($1)", nil)
                }
            }
            #expect(notNull?.sqlState == "23502")
            #expect(notNull?.column == "v")
            let hinted = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in try c.query("SELECT no_such_function($1)", 1) }
            }
            #expect(hinted?.sqlState == "42883")
            #expect(hinted?.hint != nil)
            #expect(hinted.map { "\($0)" }?.contains("SQLSTATE 42883") == true)
        }
    }

    @Test("decoding: by name, by position, tuples; NULL into a non-optional and wrong types are errors")
    func decoding() async throws {
        try await TestDatabase.withSchema { db in
            let rows = try await db.pool.withConnection { c in
                try c.query("SELECT 1 AS one, 'two' AS two, NULL::int AS three")
            }
            #expect(rows.count == 1)
            #expect(rows.columnNames == ["one", "two", "three"])
            #expect(try rows[0].decode(Int.self, column: "one") == 1)
            #expect(try rows[0].decode(String.self, column: 1) == "two")
            #expect(try rows[0].decode(Int?.self, column: "three") == nil)
            let null = #expect(throws: PostgresError.self) { try rows[0].decode(Int.self, column: "three") }
            #expect(null?.kind == .decoding)
            let wrongType = #expect(throws: PostgresError.self) { try rows[0].decode(Int.self, column: "two") }
            #expect(wrongType?.kind == .decoding)
            #expect(throws: PostgresError.self) { try rows[0].decode(Int.self, column: "missing") }
            #expect(throws: PostgresError.self) { try rows[0].decode(Int.self, column: 3) }
            #expect(throws: PostgresError.self) { try rows[0].decode(String.self, column: "one") }
        }
    }

    @Test("execute reports affected rows; array parameters work like variadic ones")
    func affectedRows() async throws {
        try await TestDatabase.withSchema { db in
            let (inserted, updated, tag) = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE n (v int)")
                let inserted = try c.execute("INSERT INTO n SELECT generate_series(1, $1)", parameters: [10])
                let updated = try c.execute("UPDATE n SET v = v + 1 WHERE v > $1", 7)
                return (inserted, updated, try c.query("DELETE FROM n").commandTag)
            }
            #expect(inserted == 10)
            #expect(updated == 3)
            #expect(tag == "DELETE 10")
        }
    }

    @Test("connection failures are recognisable and never show the password")
    func connectionFailure() async throws {
        let configuration = try PostgresConfiguration(url: "postgresql://someone:s3cret@127.0.0.1:1/db?connect_timeout=2")
        #expect(!configuration.description.contains("s3cret"))
        #expect(configuration.description == "someone@127.0.0.1:1/db")
        let error = await #expect(throws: PostgresError.self) {
            try await PostgresConnection.connect(configuration: configuration, logger: TestDatabase.logger())
        }
        #expect(error?.kind == .connection)
        #expect(error?.isConnectionFailure == true)
        #expect(error?.operation == "PQconnectdbParams")
        #expect(error.map { "\($0)".contains("s3cret") } == false)
        #expect(throws: PostgresError.self) { try PostgresConfiguration("host=x nonsense_option=1") }
    }

    @Test("a closed connection throws a .closed error")
    func closedConnection() async throws {
        let connection = try await PostgresConnection.connect(
            configuration: try PostgresConfiguration(url: TestDatabase.url()), logger: TestDatabase.logger())
        #expect(try await connection.run { c in try c.query("SELECT 1")[0].decode(Int.self, column: 0) } == 1)
        await connection.close()
        #expect(await connection.isBroken)
        let error = await #expect(throws: PostgresError.self) { try await connection.run { c in try c.query("SELECT 1") } }
        #expect(error?.kind == .closed)
    }
}
