import ServiceKit

/// The `Audit` executable's entry point: the consent record (see ``AuditService``). Its own
/// executable (`Services/Audit/Main`) and the image's multicall `recruiting-compass`
/// (`Services/MultiCall`) both call it.
public enum AuditExecutable {
    public static func main() async -> Never {
        await BusServiceMain.run(AuditServiceDescription.self, settings: AuditSettings.self) { context, settings in
            try await AuditService.configure(context, settings: settings)
            context.runtime.announceReadyOnceServing()
        }
    }
}
