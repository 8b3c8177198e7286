import HTTPTypes
import Testing

@testable import GatewayService
@testable import GatewaySupabase

/// `Prefer` as PostgREST reads it: pure, no stack.
struct PostgRESTPreferencesTests {
    @Test func preferencesAreReadLikePostgRESTReadsThem() {
        let preferences = PostgRESTPreferences([
            PostgRESTPreferences.header: "return=representation, count=exact", PostgRESTPreferences.header: "resolution=ignore-duplicates,tx=commit",
        ])
        #expect(preferences.count && preferences.returns == .representation && preferences.resolution == .ignoreDuplicates)
        let none = PostgRESTPreferences([:])
        #expect(!none.count && none.returns == .minimal && none.resolution == nil)
    }
}
