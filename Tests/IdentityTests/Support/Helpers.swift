import Foundation
import Identity
import Logging

/// A logger that drops everything: the library takes a logger, tests have nothing to read in it.
let quietLogger = Logger(label: "identity-tests") { _ in SwiftLogNoOpLogHandler() }

/// The ``IdentityError`` `body` throws, or `nil` when it returns (any other error fails the test
/// by being rethrown).
func thrown<T>(_ body: () throws -> T) throws -> IdentityError? {
    do {
        _ = try body()
        return nil
    } catch let error as IdentityError {
        return error
    }
}

/// Async form of ``thrown(_:)``.
func thrownAsync<T>(_ body: () async throws -> T) async throws -> IdentityError? {
    do {
        _ = try await body()
        return nil
    } catch let error as IdentityError {
        return error
    }
}

extension IdentityError {
    var isMalformed: Bool {
        if case .malformed = self { return true }
        return false
    }
}

/// A directory under the system temp directory, removed by ``remove()``.
struct TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("identity-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A compact JWS from JSON objects, signed by `sign` over the signing input.
func compactJWS(header: [String: Any], claims: [String: Any], sign: (Data) throws -> Data) throws -> String {
    let headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
    let claimsJSON = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
    let input = Base64URL.encode(headerJSON) + "." + Base64URL.encode(claimsJSON)
    return input + "." + Base64URL.encode(try sign(Data(input.utf8)))
}

/// `token` with its segment number `index` replaced by `segment`.
func replacingSegment(_ index: Int, of token: String, with segment: String) -> String {
    var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    parts[index] = segment
    return parts.joined(separator: ".")
}
