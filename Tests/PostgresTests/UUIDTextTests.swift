import Foundation
import Hex
import Postgres
import Testing

/// `Hex.uuid` replaces Foundation's `uuidString` (formatted with `sprintf` on Linux) wherever ids
/// become text on a hot path: it must write exactly the same characters.
@Suite struct UUIDTextTests {
    @Test func writesWhatUUIDStringWritesInEitherCase() {
        var ids = (0..<5_000).map { _ in UUID() }
        ids.append(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        ids.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        for id in ids {
            #expect(Hex.uuid(id, uppercase: true) == id.uuidString)
            #expect(Hex.uuid(id) == id.uuidString.lowercased())
            #expect(id.postgresParameter.bytes == Array(id.uuidString.utf8))
        }
    }
}
