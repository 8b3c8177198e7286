import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics

/// The first middleware of every route: gives the request an id and a trace context, works out
/// the client's address, logs one line per request, and counts it. The errors of a route are
/// answered by its family's group (``ErrorRenderingMiddleware``); what reaches this middleware is the
/// 404 of a request no route matched (in the format of the path space it falls under,
/// ``UnmatchedPathErrors``)
/// and any error of the router-level middleware. Nothing below it has to catch.
package struct RequestTracingMiddleware: RouterMiddleware {
    package typealias Context = GatewayContext
    let trustedProxies: TrustedProxies
    /// The error format of a request no route matched, by its path.
    let unmatched: UnmatchedPathErrors
    let metrics = RequestMetrics()

    static let requestIDHeader = HTTPField.Name("X-Request-Id")!
    static let forwardedForHeader = HTTPField.Name("X-Forwarded-For")!
    static let traceparentHeader = HTTPField.Name("traceparent")!

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var context = context
        let trace = TraceContext(incoming: request.headers[Self.traceparentHeader])
        context.traceparent = trace.header
        context.requestID = Self.acceptableRequestID(request.headers[Self.requestIDHeader]) ?? trace.spanID + trace.traceID.prefix(8)
        context.clientIP = trustedProxies.clientAddress(peer: context.peerAddress, forwardedFor: request.headers[values: Self.forwardedForHeader])
        context.logger[metadataKey: "request_id"] = "\(context.requestID)"
        context.logger[metadataKey: "trace_id"] = "\(trace.traceID)"

        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = ErrorResponses.response(
                for: error, renderer: unmatched.renderer(forUnmatched: request.uri.path), requestID: context.requestID,
                logger: context.logger)
        }
        response.headers[Self.requestIDHeader] = context.requestID
        let elapsed = ContinuousClock.now - started
        let route = context.endpointPath ?? "unmatched"
        let status = response.status.code
        context.logger.log(
            level: status >= 500 ? .warning : .info, "request",
            metadata: [
                "method": "\(request.method.rawValue)", "path": "\(LoggedPath.redacted(request.uri.path))", "route": "\(route)",
                "status": "\(status)",
                "ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
                "client": "\(context.clientIP ?? "-")",
            ])
        metrics.record(method: request.method, route: route, status: status, since: started)
        return response
    }

    /// A client-chosen request id is kept when it is short and plain (letters, digits, `-_.`).
    static func acceptableRequestID(_ value: String?) -> String? {
        guard let value, (1...64).contains(value.utf8.count),
            value.utf8.allSatisfy({
                $0 < 0x80
                    && (Character(Unicode.Scalar($0)).isLetter || Character(Unicode.Scalar($0)).isNumber || $0 == 0x2d || $0 == 0x5f || $0 == 0x2e)
            })
        else { return nil }
        return value
    }
}

extension Metrics.Timer {
    func recordElapsed(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}
