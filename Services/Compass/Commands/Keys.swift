import ArgumentParser
import Bus
import Foundation

/// `compass keys generate`: every key a deployment needs, as a `.env` file; `compass keys rotate`:
/// that file with one key replaced, the old one kept where what it made must keep working.
struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make and rotate a deployment's keys.", subcommands: [Generate.self, Rotate.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the keys file read on standard input with one key rotated.",
            discussion: """
                compass keys rotate ACCOUNTS_SESSION_SIGNING_KEY < .env > .env.new && mv .env.new .env
                then restart what reads it (deploy/compose up -d; in Kubernetes, the Secret replaced and
                a rollout restart). Overlaps that end (file-URL keys, Apple seal keys, a client's CURVE
                pair) end with --finish once nothing made with the old key is left.
                \(KeyRotation.names.map { "  \($0.name): \($0.what)" }.joined(separator: "\n"))
                """)
        @Argument(help: "The key to rotate.") var name: String
        @Flag(help: "End the overlap the last rotation of this key began.") var finish = false

        func run() throws {
            // Read whole before anything else runs: nothing is on the bus yet to stall.
            var file = EnvFile(String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self))
            do { try KeyRotation.rotate(name, in: &file, finish: finish, now: Date()) } catch let refusal as KeyRotation.Refusal {
                throw ValidationError(refusal.description)
            }
            print(file.text, terminator: "")
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a .env with CURVE keypairs for every bus peer, the signing keys and the database passwords.",
            discussion: """
                compass keys generate > .env && chmod 600 .env
                docker-compose reads it as it is; for Kubernetes:
                  kubectl -n recruiting-compass create secret generic compass-secrets --from-env-file=.env
                """)

        /// The peers with a CURVE identity: the four services, the gateway, and the operator (this CLI).
        static let peers = ["legal", "accounts", "documents", "audit", "gateway", "operator"]

        func run() throws {
            print(try Self.environmentFile(now: Date()), terminator: "")
        }

        static func environmentFile(now: Date) throws -> String {
            var lines = [
                "# Recruiting Compass deployment keys, made by `compass keys generate` at \(ISO8601DateFormatter().string(from: now)).",
                "# Secret: keep it out of git and readable only by the deployer (chmod 600).",
                "POSTGRES_PASSWORD=\(randomBase64URL(bytes: 24))",
                "AUDIT_SIGNING_KEY=\(randomBase64(bytes: 32))",
                "ACCOUNTS_SESSION_SIGNING_KEY=\(randomBase64(bytes: 32))",
                "# Accounts signs deletion certificates with this (its own key, not the session key; the id names the day it was made).",
                "ACCOUNTS_CERTIFICATE_SIGNING_KEY=\(certificateKeyID(now))=\(randomBase64(bytes: 32))",
                "# The gateway signs the Supabase-style anon key with this (`Gateway --print-anon-key` prints it).",
                "GATEWAY_JWT_SECRET=\(randomBase64URL(bytes: 32))",
                "# The gateways sign documents' file_url download links with this (all gateways need the same).",
                "GATEWAY_FILE_URL_KEYS=\(randomBase64URL(bytes: 32))",
            ]
            // SeaweedFS takes any key id; one that names the deployment reads well in its logs.
            let accessKeyID = "compass-" + randomBytes(8).map { String(format: "%02x", $0) }.joined()
            lines += [
                "# Documents' S3 credentials (DOCUMENTS_STORAGE=s3): compose's s3 profile makes them SeaweedFS's admin identity.",
                "DOCUMENTS_S3_ACCESS_KEY_ID=\(accessKeyID)",
                "DOCUMENTS_S3_SECRET_ACCESS_KEY=\(randomBase64URL(bytes: 32))",
            ]
            lines.append("# Each service's database roles (`compass db roles`): the owner migrates, the runtime role serves.")
            for service in ["legal", "accounts", "documents", "audit"] {
                lines.append("\(service.uppercased())_DATABASE_OWNER_PASSWORD=\(randomBase64URL(bytes: 24))")
                lines.append("\(service.uppercased())_DATABASE_PASSWORD=\(randomBase64URL(bytes: 24))")
            }
            var admitted: [String] = []
            for peer in peers {
                let pair = try envFileSafeKeyPair()
                lines.append("\(peer.uppercased())_PUBLIC_KEY=\(pair.publicKey)")
                lines.append("\(peer.uppercased())_SECRET_KEY=\(pair.secretKey)")
                admitted.append("\(peer)=\(pair.publicKey)")
            }
            lines.append("# Every service admits these clients (compose builds the same list from the keys above).")
            lines.append("BUS_ADMITTED_KEYS=\(admitted.joined(separator: ","))")
            return lines.joined(separator: "\n") + "\n"
        }

        /// A CURVE pair whose Z85 text has no `$`, `#`, quote or space: `.env` readers differ on
        /// quoting (docker-compose interpolates `$` and strips ` #…`; `kubectl --from-env-file`
        /// keeps quotes verbatim), so the only portable value is one that needs none. About one
        /// pair in seven qualifies; nothing about the key's strength changes.
        static func envFileSafeKeyPair() throws -> CurveKeyPair {
            let unsafe = Set("$#'\" ")
            while true {
                let pair = try CurveKeyPair.generate()
                if !(pair.publicKey + pair.secretKey).contains(where: unsafe.contains) { return pair }
            }
        }

        static func randomBytes(_ count: Int) -> [UInt8] {
            // SystemRandomNumberGenerator is the kernel's CSPRNG (getrandom) on Linux.
            var generator = SystemRandomNumberGenerator()
            return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        }

        /// `cert-YYYYMMDD`: a rotation's new key gets another day's id, and the old public key stays
        /// under its own in ACCOUNTS_CERTIFICATE_PREVIOUS_PUBLIC_KEYS.
        static func certificateKeyID(_ now: Date) -> String { "cert-" + KeyRotation.dayStamp(now) }

        static func randomBase64(bytes: Int) -> String { Data(randomBytes(bytes)).base64EncodedString() }

        static func randomBase64URL(bytes: Int) -> String {
            randomBase64(bytes: bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }
}
