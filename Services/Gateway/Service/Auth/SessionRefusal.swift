import Bus

/// The 401s about sessions, told apart by a stable `details.reason` in the native error body
/// (`{"error": "unauthenticated", "message": …, "details": {"reason": …}}`), so the app knows what
/// to do without reading the message:
///
/// - `session_expired`: the session token's lifetime (15 minutes) ended. Refresh it with
///   `POST /api/auth/refresh`; when that answers `sign_in_required`, sign in again.
/// - `sign_in_required`: there is no usable session: no or a malformed token, the session was
///   signed out or has expired, the account was deleted, or the refresh token is spent. Sign in
///   with Apple again (a fresh sign-in can then, for example, delete the account).
package enum SessionRefusal {
    static let reasonKey = "reason"
    static let expiredReason = "session_expired"
    static let signInRequiredReason = "sign_in_required"

    static func expired() -> BusError {
        BusError(.unauthenticated, "the session token has expired: refresh it with POST /api/auth/refresh", details: [reasonKey: expiredReason])
    }

    static func signInRequired(_ message: String) -> BusError {
        BusError(.unauthenticated, message, details: [reasonKey: signInRequiredReason])
    }
}
