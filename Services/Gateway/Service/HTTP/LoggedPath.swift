/// A request path as it goes into the log. A share link's token is a credential (anyone holding
/// it downloads the document), so `/api/shared/<token>` is logged as `/api/shared/<token>` with
/// the token itself left out. (Storage's signed URLs carry theirs in the query, which is not logged.)
package enum LoggedPath {
    /// Path prefixes whose rest is a credential.
    static let credentialPrefixes = ["/api/shared/"]

    static func redacted(_ path: String) -> String {
        for prefix in credentialPrefixes where path.hasPrefix(prefix) { return prefix + "<token>" }
        return path
    }
}
