import GatewayService

/// The HTTP gateway executable. Everything is in `GatewayService`: ``GatewayExecutable``.
@main
struct GatewayMain {
    static func main() async {
        await GatewayExecutable.main()
    }
}
