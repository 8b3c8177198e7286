import ArgumentParser
import Bus
import Contracts
import Foundation

extension LegalDocumentType: ExpressibleByArgument {}

/// `compass legal publish|show`: the operator's side of the Legal service.
struct LegalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "legal", abstract: "Publish and show legal documents.", subcommands: [Publish.self, Show.self])

    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a new version of a legal document (emits legal.published).",
            discussion: """
                A material version (the default) makes users accept again once it takes effect;
                --editorial marks a wording fix that does not. Republishing the same text under the
                same version changes nothing; a different text under a used version is refused.
                """)
        @Option(help: "privacy_policy or terms_of_service.") var type: LegalDocumentType
        @Option(help: "The new version string, e.g. 2026-01-15.") var version: String
        @Option(help: "Markdown file with the full text; - reads it from standard input.") var file: String
        @Flag(help: "A wording fix that does not require accepting again.") var editorial = false
        @Option(help: "When it takes effect (ISO 8601, e.g. 2026-01-15T00:00:00Z); now when absent.") var effectiveAt: String?
        @Flag(help: "Log bus details to standard error.") var verbose = false

        func run() async throws {
            // Standard input is read whole before the bus starts: nothing else is running to stall.
            // (`deploy/compose compass` hands a host file over this way: the container lacks it.)
            let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
            guard let data else { throw ValidationError("cannot read --file \(file)") }
            guard let content = String(data: data, encoding: .utf8) else { throw ValidationError("--file \(file) is not UTF-8") }
            let effective = try effectiveAt.map { text in
                guard let date = ISO8601DateFormatter().date(from: text) else {
                    throw ValidationError("--effective-at \(text) is not an ISO 8601 time like 2026-01-15T00:00:00Z")
                }
                return date
            }
            let bus = try BusAccess(verbose: verbose)
            let summary = try await bus.call(
                LegalPublish.self,
                .init(type: type, version: version, content: content, effectiveAt: effective, material: !editorial))
            print(Show.describe(summary))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the version in effect (or a given one), or every version with --history.")
        @Option(help: "privacy_policy or terms_of_service.") var type: LegalDocumentType
        @Option(help: "A version; the one in effect when absent.") var version: String?
        @Flag(help: "List every published version instead.") var history = false
        @Flag(help: "Print the markdown text too.") var content = false
        @Flag(help: "Log bus details to standard error.") var verbose = false

        func run() async throws {
            let bus = try BusAccess(verbose: verbose)
            if history {
                for summary in try await bus.call(LegalHistory.self, .init(type: type)).versions { print(Self.describe(summary)) }
                return
            }
            let document: LegalDocument
            if let version {
                document = try await bus.call(LegalVersion.self, .init(type: type, version: version))
            } else {
                document = try await bus.call(LegalCurrent.self, .init(type: type))
            }
            print(Self.describe(document.summary))
            if content { print("\n" + document.content) }
        }

        static func describe(_ summary: LegalVersionSummary) -> String {
            let format = ISO8601DateFormatter()
            return """
                \(summary.type.rawValue) \(summary.version) (\(summary.material ? "material" : "editorial")) \
                effective \(format.string(from: summary.effectiveAt)), published \(format.string(from: summary.publishedAt)), \
                sha256 \(summary.digest)
                """
        }
    }
}
