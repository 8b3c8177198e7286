import ServiceKit

#if canImport(Glibc)
    import Glibc
#endif

/// The `Documents` executable's entry point: recruiting documents, their bytes in PostgreSQL large
/// objects, range reads, collections and share links over the bus. Its own executable
/// (`Services/Documents/Main`) and the image's multicall `recruiting-compass` (`Services/MultiCall`)
/// both call it; it prints a `ready` line once the handlers are in place so a supervisor or test
/// can wait for it.
public enum DocumentsExecutable {
    public static func main() async -> Never {
        #if canImport(Glibc)
            // glibc raises its mmap threshold to the largest block freed (up to 32 MiB), so after
            // the first S3 part (8 MiB) every part and chunk buffer came from the heap arena of
            // whichever thread touched it (a PostgreSQL connection's, the pool's, URLSession's) and
            // stayed there when freed: Documents grew 87 MiB over a 256 MiB upload to S3. A fixed
            // threshold keeps every buffer of 256 KiB or more in its own mapping, returned on free.
            // (`mallopt` is in <malloc.h>, which Swift's Glibc module does not import: looked up by name.)
            if let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") {
                let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
                _ = mallopt(-3, 256 << 10)  // M_MMAP_THRESHOLD
            }
        #endif
        await BusServiceMain.run(DocumentsServiceDescription.self, settings: DocumentsSettings.self) { context, settings in
            try await DocumentsServiceDescription.configure(context, settings: settings)
            context.runtime.announceReadyOnceServing()
        }
    }
}
