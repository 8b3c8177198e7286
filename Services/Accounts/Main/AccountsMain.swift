import AccountsService

/// The Accounts service executable. Everything is in `AccountsService`: ``AccountsExecutable``.
@main
struct AccountsMain {
    static func main() async {
        await AccountsExecutable.main()
    }
}
