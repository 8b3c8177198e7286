import ArgumentParser
import Bus
import Foundation
import ServiceKit

/// `compass call <type> [json | @file | -]`: one request envelope on the bus, the reply printed.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one request on the bus and print the reply payload.",
        discussion: """
            The service is the type's prefix: `compass call legal.current '{"type":"terms_of_service"}'`.
            The payload is JSON text, @file, or - for standard input; {} when absent. Exits 1 on an
            error reply, printing {"error": {code, message, details}}.
            """)

    @Argument(help: "The message type, e.g. legal.current.") var type: String
    @Argument(help: "The payload: JSON, @file or -.") var payload: String?
    @Option(help: "Act for this principal (kind:id, e.g. user:<uuid>); default operator:$USER.") var principal: String?
    @Option(help: "Idempotency key (retries of idempotent calls reuse it).") var idempotencyKey: String?
    @Option(help: "Seconds to wait for the reply.") var timeout: Double = 10
    @Flag(help: "Log bus details to standard error.") var verbose = false

    func run() async throws {
        let bus = try BusAccess(verbose: verbose)
        let service = try BusAccess.service(of: type)
        let body = try Self.readPayload(payload)
        guard (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])) != nil else {
            throw ValidationError("the payload is not valid JSON")
        }
        let acting = try principal.map(Self.parsePrincipal) ?? bus.principal
        let client = try await bus.client(for: service)
        defer { Task { await client.close() } }
        let request = Envelope(
            kind: .request, type: type, principal: acting, idempotencyKey: idempotencyKey ?? MessageID.text(of: MessageID.make()),
            payload: body)
        let reply: (envelope: Envelope, attachments: [Data])
        do {
            reply = try await client.send(request, timeout: .milliseconds(Int64(timeout * 1000)), retry: true)
        } catch let error as BusError where error.code == .deadlineExceeded || error.code == .unavailable {
            throw bus.unreachable(service, error)
        }
        if let error = reply.envelope.error {
            print(String(decoding: try Self.pretty(BusJSON.encode(["error": error])), as: UTF8.self))
            throw ExitCode(1)
        }
        print(String(decoding: try Self.pretty(reply.envelope.payload ?? Data("null".utf8)), as: UTF8.self))
        if !reply.attachments.isEmpty {
            let sizes = reply.attachments.map { String($0.count) }.joined(separator: ", ")
            FileHandle.standardError.write(Data("\(reply.attachments.count) attachment(s), bytes: \(sizes)\n".utf8))
        }
    }

    static func readPayload(_ argument: String?) throws -> Data {
        guard let argument else { return Data("{}".utf8) }
        if argument == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        if argument.hasPrefix("@") {
            let path = String(argument.dropFirst())
            guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
            return data
        }
        return Data(argument.utf8)
    }

    static func parsePrincipal(_ text: String) throws -> Principal {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let kind = Principal.Kind(rawValue: parts[0]) else {
            throw ValidationError("--principal must be kind:id with kind user, service, operator or anonymous")
        }
        return Principal(kind, parts[1])
    }

    static func pretty(_ json: Data) throws -> Data {
        let object = try JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    }
}
