import JWTKit

/// A jwt-kit `JWTKeyCollection` filled once, for types whose initialisers are synchronous.
///
/// Adding keys to the collection (an actor) is `async`; the fill starts in the initialiser and
/// the first use awaits it, later uses find it done.
struct KeyCollection: Sendable {
    private let filled: Task<JWTKeyCollection, Never>

    /// A collection with ``TokenCoding``'s parser and serializer, filled by `fill`. Unless
    /// `keepingDefault`, the collection has no default key afterwards.
    init(keepingDefault: Bool = false, _ fill: @escaping @Sendable (JWTKeyCollection) async -> Void) {
        filled = Task {
            let collection = JWTKeyCollection(defaultJWTParser: TokenCoding.parser, defaultJWTSerializer: TokenCoding.serializer)
            await fill(collection)
            // Keys are only ever picked by `kid` (checked against the set beforehand); without a
            // default, jwt-kit has no key to fall back to for a `kid` it does not hold.
            if !keepingDefault { await collection.clearDefault() }
            return collection
        }
    }

    /// The collection, once filled.
    var collection: JWTKeyCollection {
        get async { await filled.value }
    }
}
