import AccountsService
import AuditService
import CompassCLI
import DocumentsService
import Foundation
import GatewayAssembly
import LegalService

/// `recruiting-compass`: every shipped executable in one binary, for the container image
/// (`deploy/Dockerfile`). Six statically linked executables each carried their own copy of the
/// Swift runtime, Foundation and the shared libraries; one binary carries them once.
///
/// The name it is run by picks the executable: the image links `Legal`, `Audit`, `Accounts`,
/// `Documents`, `Gateway` and `compass` to it, so a container's command stays `Legal` or
/// `compass db roles`. Run by its own name, its first argument picks (`recruiting-compass Legal`):
/// it runs itself again under that name, so every entry point, its `--help` and the image's health
/// check (`deploy/container-healthcheck`, which reads the process's name) see the name they expect.
@main
struct MultiCall {
    static let ownName = "recruiting-compass"
    static let names = ["Legal", "Audit", "Accounts", "Documents", "Gateway", "compass"]

    static func main() async {
        let arguments = CommandLine.arguments
        let invokedAs = URL(fileURLWithPath: arguments.first ?? ownName).lastPathComponent
        if names.contains(invokedAs) {
            await run(invokedAs)
            return
        }
        guard arguments.count > 1, names.contains(arguments[1]) else {
            let usage = "usage: \(ownName) {\(names.joined(separator: "|"))} [arguments…], or run it by one of those names\n"
            if arguments.count == 2, ["-h", "--help", "help"].contains(arguments[1]) {
                print(usage, terminator: "")
                exit(0)
            }
            let given = arguments.count > 1 ? "unknown executable \"\(arguments[1])\"; " : ""
            FileHandle.standardError.write(Data((given + usage).utf8))
            exit(64)
        }
        reexecute(as: arguments[1], arguments: Array(arguments.dropFirst(2)))
    }

    static func run(_ name: String) async {
        switch name {
        case "Legal": await LegalExecutable.main()
        case "Audit": await AuditExecutable.main()
        case "Accounts": await AccountsExecutable.main()
        case "Documents": await DocumentsExecutable.main()
        case "Gateway": await GatewayExecutable.main()
        default: await CompassExecutable.main()
        }
    }

    /// Replaces this process by this binary again with `name` as its `argv[0]`.
    static func reexecute(as name: String, arguments: [String]) -> Never {
        let path = Bundle.main.executablePath ?? "/proc/self/exe"
        var argv: [UnsafeMutablePointer<CChar>?] = ([name] + arguments).map { strdup($0) }
        argv.append(nil)
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        FileHandle.standardError.write(Data("\(ownName): cannot run \(path) as \(name): \(reason)\n".utf8))
        exit(1)
    }
}
