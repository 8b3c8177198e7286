import DocumentsService
import Foundation
import ServiceKit

/// The Documents service executable: recruiting documents, their bytes in PostgreSQL large
/// objects, range reads, collections and share links over the bus. Everything is in
/// `DocumentsService`; this only starts it, and prints a `ready` line once the handlers are in
/// place so a supervisor or test can wait for it.
@main
struct DocumentsMain {
    static func main() async {
        await BusServiceMain.run(DocumentsServiceDescription.self, settings: DocumentsSettings.self) { context, settings in
            try await DocumentsServiceDescription.configure(context, settings: settings)
            context.runtime.announceReady(["health": context.runtime.healthPort])
        }
    }
}
