import Bus
import Contracts
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ReliabilityTests {
    /// Reads with a fresh key (or request id) each, as any anonymous client can send them, must not
    /// grow a service: reads' replies are never kept for retries. Writes' replies are, within
    /// their window: a retry gets the first reply, and the same key for another body is refused.
    @Suite("Reliability: idempotency memory under fresh-key reads")
    struct IdempotencyMemoryTests {
        /// Bus reads, spread over the four services, each with its own idempotency key: 50 000 in
        /// `deploy/test` (about a minute of a debug build on two loaded cores: 829 calls/s), 200 000
        /// with `RELIABILITY_FRESH_KEY_READS=200000`. Before reads stopped being kept, 50 000 were
        /// already enough to grow Legal by hundreds of MiB (a third of them are `legal.current`,
        /// each reply the whole terms text).
        static let busReads = Int(ProcessInfo.processInfo.environment["RELIABILITY_FRESH_KEY_READS"] ?? "") ?? 50_000
        /// `GET /api/terms` through the gateway, each with its own `X-Request-Id`.
        static let httpReads = 20_000
        /// Calls in flight at once (the client pipelines them over one socket per service).
        static let inFlight = 256
        /// What a service's resident memory may grow by over the whole run (before this, Legal
        /// kept every `legal.current` reply: a 200k run grew it by gigabytes).
        static let growthBound = 64 << 20
        /// And its size at the end (the Kubernetes manifests give each service 256 MiB).
        static let rssBound = 200 << 20

        @Test func freshKeyReadsDoNotGrowAnyService() async throws {
            try await Stack.run(gateway: true) { stack in
                let names = Stack.order + [Stack.gatewayName]
                let terms = try await stack.currentTerms()
                let busReads = Self.busReads
                let before = try Dictionary(uniqueKeysWithValues: names.map { ($0, try Self.rss(of: stack, $0)) })

                let started = ContinuousClock.now
                let failures = Locked([String: Int]())
                // Reads that need no database, one service after another by index, and every
                // twentieth one that does (Documents' usage of a user); all reads, none needs a user.
                let reads: [(String, @Sendable (String) async throws -> Void)] = [
                    (
                        "legal.current",
                        { key in
                            _ = try await stack.legal.call(
                                LegalCurrent.self, .init(type: .termsOfService), principal: .anonymous, idempotencyKey: key)
                        }
                    ),
                    (
                        "audit.public_key",
                        { key in _ = try await stack.audit.call(AuditPublicKey.self, Empty(), principal: .anonymous, idempotencyKey: key) }
                    ),
                    (
                        "accounts.public_keys",
                        { key in _ = try await stack.accounts.call(AccountsPublicKeys.self, Empty(), principal: .anonymous, idempotencyKey: key) }
                    ),
                ]
                let usage: @Sendable (String) async throws -> Void = { key in
                    _ = try await stack.documents.call(
                        DocumentsUsage.self, .init(userId: UUID()), principal: .service("accounts"), idempotencyKey: key)
                }
                let next = Locked(0)
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<Self.inFlight {
                        group.addTask {
                            while true {
                                let index = next.withLock { value in
                                    value += 1
                                    return value
                                }
                                guard index <= busReads else { return }
                                let (name, read) = index % 20 == 0 ? ("documents.usage", usage) : reads[index % reads.count]
                                do { try await read(MessageID.text(of: MessageID.make())) } catch {
                                    let code = (error as? BusError)?.code.rawValue ?? "other"
                                    failures.withLock { $0["\(name):\(code)", default: 0] += 1 }
                                }
                            }
                        }
                    }
                }
                let busTook = ContinuousClock.now - started
                let httpStarted = ContinuousClock.now
                let httpFailures = try await Self.getTerms(port: try stack.gatewayPort(), count: Self.httpReads)
                let httpTook = ContinuousClock.now - httpStarted

                var report: [String] = []
                for name in names {
                    let after = try Self.rss(of: stack, name)
                    let growth = after - before[name]!
                    report.append("\(name)=\(before[name]! >> 20)->\(after >> 20)MiB")
                    #expect(growth < Self.growthBound, "\(name) grew by \(growth >> 20) MiB")
                    #expect(after < Self.rssBound, "\(name) holds \(after >> 20) MiB")
                }
                let failed = failures.withLock { $0 }
                #expect(failed.isEmpty, "bus reads failed: \(failed)")
                #expect(httpFailures == 0, "\(httpFailures) GET /api/terms failed")

                // A write retried inside the window gets the first reply; another body under the
                // same key is refused.
                let user = UUID()
                let record = AuditRecord.Request(userId: user, documentType: .termsOfService, version: terms, action: .accept)
                let first = try await stack.audit.call(AuditRecord.self, record, principal: Stack.operatorPrincipal, idempotencyKey: "retry-window")
                let retry = try await stack.audit.call(AuditRecord.self, record, principal: Stack.operatorPrincipal, idempotencyKey: "retry-window")
                #expect(retry == first)
                var other = record
                other.action = .decline
                await #expect(throws: BusError.self) {
                    do {
                        _ = try await stack.audit.call(AuditRecord.self, other, principal: Stack.operatorPrincipal, idempotencyKey: "retry-window")
                    } catch let error as BusError {
                        #expect(error.code == .idempotencyKeyReused)
                        throw error
                    }
                }
                print(
                    "RELIABILITY idempotency-memory bus-reads=\(busReads) in \(busTook) (\(Int(Double(busReads) / busTook.inSeconds))/s) http-reads=\(Self.httpReads) in \(httpTook) rss=\(report.joined(separator: " ")) bound=growth<\(Self.growthBound >> 20)MiB,rss<\(Self.rssBound >> 20)MiB"
                )
            }
        }

        /// `count` GETs of `/api/terms`, each with its own request id, 32 at a time; the failures.
        static func getTerms(port: Int, count: Int) async throws -> Int {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = 32
            configuration.urlCache = nil
            let session = URLSession(configuration: configuration)
            defer { session.invalidateAndCancel() }
            let failures = Tally()
            let next = Locked(0)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        while true {
                            let index = next.withLock { value in
                                value += 1
                                return value
                            }
                            guard index <= count else { return }
                            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/api/terms")!)
                            request.setValue(UUID().uuidString, forHTTPHeaderField: "X-Request-Id")
                            let status = (try? await session.data(for: request)).flatMap { ($0.1 as? HTTPURLResponse)?.statusCode }
                            if status != 200 { failures.add() }
                        }
                    }
                }
            }
            return failures.count
        }

        /// The resident set of one of the stack's processes, in bytes (`VmRSS`).
        static func rss(of stack: Stack, _ name: String) throws -> Int {
            guard let pid = stack.process(name)?.process.processIdentifier,
                let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
            else { throw TestSupportError("no VmRSS for \(name)") }
            return kilobytes * 1024
        }
    }
}
