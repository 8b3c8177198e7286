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

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        self.checksum = Hex.string(SHA256.hash(data: Array(sql.utf8)))
    }

    /// Loads every `NNNN_name.sql` file of `directory`, sorted by version. Other files are
    /// ignored; two files with the same version are an error.
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
            migrations.append(Migration(version: version, name: name, sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError.duplicateVersion(previous.name, next.name)
        }
        return migrations
    }
}

/// Why migrations refused to run.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An applied migration's file changed since: the database no longer matches the code.
    case checksumMismatch(name: String, applied: String, file: String)
    case duplicateVersion(String, String)
    /// Schema names are interpolated into DDL, so only `[a-z_][a-z0-9_]*` is accepted.
    case invalidSchemaName(String)

    public var description: String {
        switch self {
        case .checksumMismatch(let name, let applied, let file):
            "migration \(name) changed after it was applied (applied checksum \(applied), file \(file)); "
                + "add a new migration instead of editing an applied one"
        case .duplicateVersion(let a, let b): "migrations \(a) and \(b) have the same version"
        case .invalidSchemaName(let name): "invalid schema name \"\(name)\""
        }
    }
}
