import GatewayAssembly

/// The HTTP gateway executable. Everything is in `GatewayAssembly`: ``GatewayExecutable``.
@main
struct GatewayMain {
    static func main() async {
        await GatewayExecutable.main()
    }
}
