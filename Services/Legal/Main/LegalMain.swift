import LegalService

/// The Legal service executable. Everything is in `LegalService`: ``LegalExecutable``.
@main
struct LegalMain {
    static func main() async {
        await LegalExecutable.main()
    }
}
