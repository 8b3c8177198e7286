import CLibPQ

/// Where and how to connect: a `postgresql://` URL or a libpq `key=value` string, parsed and
/// validated by libpq itself (`PQconninfoParse`), so every libpq option works.
///
/// ``description`` never shows the password.
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// The parsed options, in libpq's order, with empty values removed.
    public private(set) var options: [(key: String, value: String)]

    /// Parses `connectionString`, which may be a URL (`postgresql://user@host:port/db?opt=v`) or
    /// `host=… port=… dbname=…`. Unless it says otherwise, `connect_timeout` is 10 seconds and
    /// `application_name` is `applicationName`, so a dead host fails fast and `pg_stat_activity`
    /// says who is connected.
    public init(_ connectionString: String, applicationName: String? = nil) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(connectionString, &error) else {
            let message = error.map { String(cString: $0).trimmed } ?? "out of memory"
            if let error { PQfreemem(error) }
            throw PostgresError(
                kind: .usage, operation: "PQconninfoParse",
                message: "invalid connection string: \(message)")
        }
        defer { PQconninfoFree(parsed) }
        var options: [(key: String, value: String)] = []
        var option = parsed
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                options.append((String(cString: keyword), String(cString: value)))
            }
            option += 1
        }
        self.options = options
        if self["connect_timeout"] == nil { self["connect_timeout"] = "10" }
        if let applicationName, self["application_name"] == nil {
            self["application_name"] = applicationName
        }
    }

    /// Same as ``init(_:applicationName:)``; reads better with a URL.
    public init(url: String, applicationName: String? = nil) throws {
        try self.init(url, applicationName: applicationName)
    }

    /// The value of one libpq option (`host`, `port`, `dbname`, `user`…), or `nil`.
    public subscript(key: String) -> String? {
        get { options.first { $0.key == key }?.value }
        set {
            options.removeAll { $0.key == key }
            if let newValue { options.append((key, newValue)) }
        }
    }

    /// `user@host:port/dbname`, without the password: safe to log.
    public var description: String {
        "\(self["user"] ?? "")@\(self["host"] ?? self["hostaddr"] ?? "localhost"):"
            + "\(self["port"] ?? "5432")/\(self["dbname"] ?? "")"
    }
}
