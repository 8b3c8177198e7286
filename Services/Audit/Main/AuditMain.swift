import AuditService

/// The `audit` executable. Everything is in `AuditService`: ``AuditExecutable``.
@main
struct AuditMain {
    static func main() async {
        await AuditExecutable.main()
    }
}
