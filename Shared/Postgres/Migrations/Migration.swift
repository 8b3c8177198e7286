import Crypto
import Foundation
import Hex

/// One migration file: `NNNN_description.sql`, applied once, in version order.
public struct Migration: Sendable, Hashable {
    /// The numeric prefix: the order, and the key recorded in `schema_migrations`.
    public let version: Int
    /// The file name without `.sql`, e.g. `0001_create_documents`.
    public let name: String
    /// The SQL: trusted, static text, run as a simple-query script (several statements allowed;
    /// no `BEGIN`/`COMMIT`: the migrator wraps each file in a transaction).
    public let sql: String
    /// SHA-256 of the UTF-8 SQL, hex: a file changed after it was applied is refused.
    public let checksum: String
    /// Checksums of earlier texts of this file that ran the same statements (only a comment was
    /// reworded): a database that applied one of them is up to date, not changed behind our back.
    /// Read from `NNNN_name.superseded` beside the file.
    public let supersededChecksums: Set<String>
    /// What `schema_migrations` records when this file is applied: the first text's checksum (the
    /// first line of `NNNN_name.superseded`), else this text's. A database first migrated by a
    /// release with the reworded text must still start the releases before it (a rollback, a
    /// restored backup, an older instance in a rolling update): they know only the first text, and
    /// their migrators read no `.superseded` list. The statements are the same either way.
    public let recordedChecksum: String

    /// `supersededChecksums` oldest first: the first is the one recorded.
    public init(version: Int, name: String, sql: String, supersededChecksums: [String] = []) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = Hex.string(SHA256.hash(data: Array(sql.utf8)))
        self.supersededChecksums = Set(supersededChecksums)
        self.recordedChecksum = supersededChecksums.first ?? checksum
    }

    /// Whether a database that recorded `applied` for this version has this file's statements.
    public func matches(applied: String) -> Bool {
        applied == checksum || supersededChecksums.contains(applied)
    }

    /// Loads every `NNNN_name.sql` file of `directory`, sorted by version, each with the
    /// checksums its `NNNN_name.superseded` lists (one hex SHA-256 a line, the first text's first; `#`
    /// starts a comment).
    /// Other files are ignored; two files with the same version are an error, and so is a
    /// superseded line that is not a SHA-256.
    public static func load(directory: URL) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: nil)
        var migrations: [Migration] = []
        for file in files where file.pathExtension == "sql" {
            let name = file.deletingPathExtension().lastPathComponent
            guard let prefix = name.split(separator: "_", maxSplits: 1).first,
                name.contains("_"), prefix.allSatisfy(\.isASCII), let version = Int(prefix)
            else { continue }
            let sql = try String(contentsOf: file, encoding: .utf8)
            let superseded = try supersededChecksums(
                of: name, in: directory.appendingPathComponent("\(name).superseded"))
            migrations.append(Migration(version: version, name: name, sql: sql, supersededChecksums: superseded))
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError.duplicateVersion(previous.name, next.name)
        }
        return migrations
    }

    /// The checksums a `.superseded` file lists, in its order (the first text first).
    private static func supersededChecksums(of name: String, in file: URL) throws -> [String] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        var checksums: [String] = []
        for line in try String(contentsOf: file, encoding: .utf8).split(whereSeparator: \.isNewline) {
            let text = (line.firstIndex(of: "#").map { line[..<$0] } ?? line).trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            let isHexDigit = { (byte: UInt8) in (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }
            guard text.utf8.count == 64, text.utf8.allSatisfy(isHexDigit) else {
                throw MigrationError.invalidSupersededChecksum(name: name, line: text)
            }
            if !checksums.contains(text) { checksums.append(text) }
        }
        return checksums
    }
}

/// Why migrations refused to run.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An applied migration's file changed since: the database no longer matches the code.
    case checksumMismatch(name: String, applied: String, file: String)
    case duplicateVersion(String, String)
    /// A line of a `.superseded` file is not a lowercase hex SHA-256.
    case invalidSupersededChecksum(name: String, line: String)
    /// Schema names are interpolated into DDL, so only `[a-z_][a-z0-9_]*` is accepted.
    case invalidSchemaName(String)

    public var description: String {
        switch self {
        case .checksumMismatch(let name, let applied, let file):
            "migration \(name) changed after it was applied (applied checksum \(applied), file \(file)); "
                + "add a new migration instead of editing an applied one"
        case .duplicateVersion(let a, let b): "migrations \(a) and \(b) have the same version"
        case .invalidSupersededChecksum(let name, let line):
            "\(name).superseded: \"\(line)\" is not a lowercase hex SHA-256"
        case .invalidSchemaName(let name): "invalid schema name \"\(name)\""
        }
    }
}
