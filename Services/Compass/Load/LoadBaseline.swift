import ArgumentParser
import Foundation

extension Load {
    /// `compass load baseline`: pgbench's one-INSERT-per-commit rate on `DATABASE_URL` alone, the
    /// figure `compass load acceptances --baseline` measures first, for a tool that measures it on
    /// its own terms (`deploy/bench-load` reads the CPU it costs). One home for the baseline:
    /// ``BaselineTable``.
    struct Baseline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure pgbench's one-INSERT-per-commit rate (-M prepared) on DATABASE_URL.",
            discussion: """
                The same run as `compass load acceptances --baseline`: 32 clients insert rows shaped like an
                acceptance, one per commit, into a scratch schema of their own (compass_load), which is
                dropped afterwards.
                """)

        @Option(help: "Seconds to run.") var duration = 10
        @Flag(help: "Print the result as JSON.") var json = false

        func validate() throws {
            guard duration > 0 else { throw ValidationError("--duration must be above 0") }
            if DatabaseURL.given() == nil { throw ValidationError(DatabaseURL.refusal(role: "the database pgbench writes to")) }
        }

        func run() async throws {
            let url = try DatabaseURL.required(role: "the database pgbench writes to")
            let tps = try await BaselineTable.measure(url: url, seconds: duration)
            if json {
                print(#"{"pgbenchMode":"prepared","pgbenchPerSecond":\#(tps),"seconds":\#(duration)}"#)
            } else {
                print(String(format: "pgbench -M prepared, one INSERT per commit: %.0f/s over %d s", tps, duration))
            }
        }
    }
}
