import Postgres

/// The tables the outbox and event consumers keep in a service's own schema.
///
/// Versions 1–99 of every service schema are reserved for ServiceKit's tables; a service numbers
/// its own migration files from 100 (Legal's `0100_versions.sql`), so both live in one
/// `schema_migrations` record and apply in one ordered run.
public enum OutboxSchema {
    public static let migrations: [Migration] = [
        Migration(
            version: 1, name: "0001_outbox",
            sql: """
                -- Events written in the same transaction as the state change they announce.
                -- `sequence` stays NULL until the relay, alone under an advisory lock, numbers the
                -- committed rows in the order it sees them: gap-free and never reused, so a subscriber
                -- that sees sequence n+2 after n knows it missed one.
                CREATE TABLE outbox (
                    id bigserial PRIMARY KEY,
                    sequence bigint UNIQUE,
                    type text NOT NULL CHECK (type <> ''),
                    payload jsonb NOT NULL,
                    created_at timestamptz NOT NULL DEFAULT now(),
                    published_at timestamptz
                );
                CREATE INDEX outbox_unsequenced ON outbox (id) WHERE sequence IS NULL;

                -- For each publisher this service consumes: the last event applied. Updated in the
                -- same transaction as the event's effects, which is what makes applying exactly-once.
                CREATE TABLE event_cursors (
                    publisher text PRIMARY KEY,
                    last_sequence bigint NOT NULL CHECK (last_sequence >= 0),
                    updated_at timestamptz NOT NULL DEFAULT now()
                );
                """),
        Migration(
            version: 2, name: "0002_dead_letters",
            sql: """
                -- Events a consumer could not apply after its retries: kept whole (the envelope as
                -- published) with the last error, skipped by the cursor, until an operator retries them.
                CREATE TABLE dead_letters (
                    publisher text NOT NULL,
                    sequence bigint NOT NULL,
                    type text NOT NULL,
                    envelope bytea NOT NULL,
                    error text NOT NULL,
                    attempts integer NOT NULL CHECK (attempts >= 1),
                    parked_at timestamptz NOT NULL DEFAULT now(),
                    retried_at timestamptz,
                    PRIMARY KEY (publisher, sequence)
                );
                """),
    ]

    /// Schema names go into SQL text (DDL and qualified names cannot be parameters), so they are
    /// restricted to `[a-z_][a-z0-9_]*` and checked before any use.
    static func validated(_ schema: String) -> String {
        let scalars = schema.unicodeScalars
        precondition(
            !scalars.isEmpty && scalars.count <= 63 && !("0"..."9").contains(scalars.first!)
                && scalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) },
            "invalid schema name \(schema)")
        return schema
    }
}
