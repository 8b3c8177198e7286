import ServiceKit

/// The `Documents` executable's entry point: recruiting documents, their bytes in PostgreSQL large
/// objects, range reads, collections and share links over the bus. Its own executable
/// (`Services/Documents/Main`) and the image's multicall `recruiting-compass` (`Services/MultiCall`)
/// both call it; it prints a `ready` line once the handlers are in place so a supervisor or test
/// can wait for it.
public enum DocumentsExecutable {
    public static func main() async -> Never {
        await BusServiceMain.run(DocumentsServiceDescription.self, settings: DocumentsSettings.self) { context, settings in
            try await DocumentsServiceDescription.configure(context, settings: settings)
            context.runtime.announceReady(["health": context.runtime.healthPort])
        }
    }
}
