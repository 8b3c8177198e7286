import Bus
import Foundation
import GatewayAssembly
import Logging
import Testing

@testable import AccountsService
@testable import DocumentsService
@testable import GatewayService
@testable import LegalService
@testable import ServiceKit

/// The shipped privacy policy promises only what the system does: every right it says the user
/// can exercise has its route in the gateway's catalog, and every retention period it names is
/// the default the services are configured with. A change to either side without the other fails
/// here.
@Suite struct PrivacyTextPromisesTests {
    static func text() throws -> String { try DefaultTexts.content(of: .privacyPolicy) }

    /// The markdown of the h2 section numbered `number`.
    static func section(_ number: Int, of content: String) -> String {
        guard let start = content.range(of: "\n## \(number). ") else { return "" }
        let rest = content[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    /// Every `METHOD /path` the gateway registers, built in-process as `/openapi.json` is.
    static func routes() throws -> Set<String> {
        let environment = EnvironmentReader(["HEALTH_PORT": "0", "GATEWAY_JWT_SECRET": String(repeating: "k", count: 40)])
        let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 0)
        let logger = Logger(label: "privacy-promises") { _ in SwiftLogNoOpLogHandler() }
        let runtime = ServiceRuntime(name: "gateway", configuration: configuration, logger: logger, metrics: MetricsBootstrap.bootstrap())
        let catalog = RouteCatalog()
        let settings = try GatewayProcessSettings(environment: environment)
        _ = GatewayApplication.makeRouter(
            runtime: runtime, settings: settings.core, modules: settings.modules, services: ServiceClients(clients: [:], timeout: .seconds(1)),
            sessions: SessionVerifier(maximumStaleness: .seconds(5)), catalog: catalog)
        return Set(catalog.all.map { $0.method + " " + $0.path })
    }

    /// Each right as the text words it, and the routes that carry it out.
    static let rights: [(words: String, routes: [String])] = [
        ("**See your information.**", ["GET /api/me"]),
        ("**Correct your information.** You can correct your name, e-mail address and state of residence", ["PATCH /api/me"]),
        ("**Download a copy.**", ["GET /api/me/export"]),
        (
            "**Delete your account.**",
            [
                "GET /api/me/deletion/preview", "POST /api/me/deletion", "POST /api/me/deletion/:requestId/confirm",
                "DELETE /api/me/deletion/:requestId",
            ]
        ),
        ("**Withdraw your agreement.** You can decline our Terms of Service in the app", ["POST /api/me/consents/:type/:action"]),
        ("check those signatures yourself", ["POST /api/receipts/verify"]),
        ("Every previous version stays available to read.", ["GET /api/legal/:type/versions", "GET /api/legal/:type/versions/:version"]),
    ]

    @Test func everyRightItNamesHasItsRoute() throws {
        let content = try Self.text()
        let routes = try Self.routes()
        for (words, needed) in Self.rights {
            #expect(content.contains(words), "the text no longer says: \(words)")
            for route in needed { #expect(routes.contains(route), "\(words) — no route \(route)") }
        }
        // The summary at the top promises the same four rights.
        #expect(
            Self.section(1, of: content).contains("You can see and correct your information, download a copy of all of it, and delete your account"))
    }

    /// Whole hours, days or minutes as the text writes them ("24 hours", "30 days").
    static func words(_ seconds: Double) -> String {
        if seconds.truncatingRemainder(dividingBy: 86_400) == 0, seconds >= 2 * 86_400 { return "\(Int(seconds / 86_400)) days" }
        if seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600)) hours" }
        return "\(Int(seconds / 60)) minutes"
    }

    @Test func everyPeriodItNamesIsTheConfiguredDefault() throws {
        let documents = try DocumentsSettings(environment: EnvironmentReader([:]))
        let periods: [(sentence: String, seconds: Double)] = [
            (
                "**Unfinished uploads** are deleted \(Self.words(documents.uploadExpiry.inSeconds)) after the last part",
                documents.uploadExpiry.inSeconds
            ),
            ("at most \(Self.words(documents.shareMaxLifetime.inSeconds)) after you create them", documents.shareMaxLifetime.inSeconds),
            (
                "You confirm within \(Self.words(Double(DeletionHandlers.requestLifetimeSeconds))) of asking",
                Double(DeletionHandlers.requestLifetimeSeconds)
            ),
        ]
        let content = try Self.text()
        for (sentence, seconds) in periods {
            #expect(content.contains(sentence), "the text does not say \(sentence) (configured: \(seconds) s)")
        }
        // No other period is promised anywhere: each number of minutes, hours, days, months or
        // years in the text is one of the above, or the reply times of the law (one month, 45
        // days) and the minimum age of the eligibility rules, which are not retention.
        let age = try EligibilityRules.bundled().minimumAge
        #expect(content.contains("at least \(age) years old"), "the minimum age is the eligibility rules' \(age)")
        let known = Set(periods.map { Self.words($0.seconds) } + ["\(age) years", "45 days", "one month", "five business days"])
        let pattern = try NSRegularExpression(
            pattern: #"\b(\d+|one|two|three|five|six|twelve) (business )?(minutes?|hours?|days?|weeks?|months?|years?)\b"#)
        let range = NSRange(content.startIndex..., in: content)
        for match in pattern.matches(in: content, range: range) {
            let found = String(content[Range(match.range, in: content)!])
            #expect(known.contains(found) || found == "twelve months", "a period the system does not configure: \(found)")
        }
    }

    @Test func backupsAndDeletionAreDescribedAsImplemented() throws {
        let retention = Self.section(8, of: try Self.text())
        // The software makes no backups: the text says so, and names no backup period of its own.
        #expect(retention.contains("The Service's software makes no backups of its own."))
        #expect(!retention.contains("35 days"))
        // Deletion: account rows at once with every session ended, documents on the event,
        // the consent trail pseudonymised, a certificate (see AccountsTests and GatewayTests).
        for words in ["deleted at once", "signed out on every device", "signed certificate", "pseudonymised"] {
            #expect(retention.contains(words), "retention no longer says \(words)")
        }
    }
}
