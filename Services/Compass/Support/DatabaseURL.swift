import Foundation

/// The database URL a command connects with: its `--database-url` option when it has one, else
/// the environment variable, and a refusal in one wording (what to set, and whose URL it must be)
/// when neither is there. An empty value is as good as none: `DATABASE_URL=` in a `.env` file.
enum DatabaseURL {
    /// `option`, else `variable`'s value; `nil` when both are missing or empty.
    static func given(_ option: String? = nil, variable: String = "DATABASE_URL") -> String? {
        if let option, !option.isEmpty { return option }
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { return nil }
        return value
    }

    /// ``given(_:variable:)``, or ``CLIError`` saying what to give: `role` names the URL's
    /// role (e.g. "Accounts' schema owner"); `flag`, the command's option, when it has one.
    static func required(_ option: String? = nil, flag: String? = nil, variable: String = "DATABASE_URL", role: String) throws -> String {
        if let url = given(option, variable: variable) { return url }
        throw CLIError(refusal(flag: flag, variable: variable, role: role))
    }

    /// The words of the refusal.
    static func refusal(flag: String? = nil, variable: String = "DATABASE_URL", role: String) -> String {
        "\(flag.map { "give \($0) or set " } ?? "set ")\(variable): the URL of \(role)"
    }
}
