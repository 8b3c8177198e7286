import CompassCLI

/// The `compass` executable. Everything is in `CompassCLI`: ``CompassExecutable``.
@main
struct CompassMain {
    static func main() async {
        await CompassExecutable.main()
    }
}
