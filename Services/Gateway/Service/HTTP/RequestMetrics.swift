import HTTPTypes
import Locks
import Metrics

/// The gateway's per-request series: `gateway_http_requests_total` by method, route and status,
/// and `gateway_http_request_duration_seconds` by route.
///
/// Each series' counter or timer is made once and kept. Made per request (as
/// `Counter(label:dimensions:)` does), every request paid a registry look-up under its lock and a
/// hash of its labels. The labels are bounded, so the kept handles are: a route is one of the
/// router's patterns or `unmatched`, a status is three digits, and a method outside the ones
/// HTTP itself defines (WebDAV's, say) counts as `other`. The HTTP parser refuses methods it does
/// not know today; the label does not rely on that, since any token is a valid method and a new
/// one per request would add a series per request, here and in the registry.
package final class RequestMetrics: Sendable {
    private struct Series: Hashable {
        var method: String
        var route: String
        var status: Int
    }
    /// The counter of each series, with its route's timer (the registry gives every series of one
    /// route the same timer), so a request takes one lock.
    private let handles = LockedValue<[Series: Handles]>([:])
    private struct Handles: Sendable {
        let requests: Counter
        let duration: Metrics.Timer
    }

    /// The methods counted by name.
    static let namedMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options, .connect, .trace]

    /// The method as a label: its name when HTTP defines it, `other` when not.
    static func label(of method: HTTPRequest.Method) -> String {
        namedMethods.contains(method) ? method.rawValue : "other"
    }

    /// Counts one request and records how long it took.
    func record(method: HTTPRequest.Method, route: String, status: Int, since started: ContinuousClock.Instant) {
        let series = Series(method: Self.label(of: method), route: route, status: status)
        let kept = handles.kept(series) {
            Handles(
                requests: Counter(
                    label: "gateway_http_requests_total", dimensions: [("method", series.method), ("route", route), ("status", String(status))]),
                duration: Metrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: [("route", route)]))
        }
        kept.requests.increment()
        kept.duration.recordElapsed(since: started)
    }
}
