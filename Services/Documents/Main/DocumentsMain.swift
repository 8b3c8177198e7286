import DocumentsService

/// The Documents service executable. Everything is in `DocumentsService`: ``DocumentsExecutable``.
@main
struct DocumentsMain {
    static func main() async {
        await DocumentsExecutable.main()
    }
}
