import GatewayService
import GatewaySupabase
import ServiceKit

/// The gateway process's settings: the core's and each route module's, read from one environment
/// (so `--help-env` and the configuration reference list them all), and the modules the gateway
/// serves, made from them.
package struct GatewayProcessSettings: EnvironmentSettings {
    package var core: GatewaySettings
    package var supabase: SupabaseSettings

    package init(environment: EnvironmentReader) throws {
        core = try GatewaySettings(environment: environment)
        supabase = try SupabaseSettings(environment: environment)
    }

    /// The route modules the gateway serves, beside the core's routes.
    package var modules: [any RouteModule] { [SupabaseModule(settings: supabase)] }
}
