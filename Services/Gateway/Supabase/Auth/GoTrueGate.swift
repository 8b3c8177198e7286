import GatewayService
import Hummingbird

/// The middleware of every Supabase Auth route: the `apikey` header must be the anon key (as
/// Supabase's gateway demands; checked when the gateway has one), and anything the route throws
/// is answered in GoTrue's body (``GoTrueError``), the versioned one when the client asks for it.
struct GoTrueGate: RouterMiddleware {
    typealias Context = GatewayContext
    let anonymousKey: AnonymousKey?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            if let anonymousKey {
                guard let presented = request.headers[SupabaseModule.apiKeyHeader], !presented.isEmpty else {
                    throw GoTrueError(.unauthorized, "no_api_key", "No API key found in request: send the anon key in the apikey header")
                }
                guard await anonymousKey.isValid(presented) else { throw GoTrueError(.unauthorized, "invalid_api_key", "Invalid API key") }
            }
            return try await next(request, context)
        } catch {
            return GoTrueError.from(error, logger: context.logger).response(versioned: GoTrueError.wantsVersionedBody(request))
        }
    }
}
