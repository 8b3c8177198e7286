import Logging

/// Logger metadata as flat `key → value` pairs: nested dictionaries become dotted keys
/// (`request.id`), arrays stay arrays of strings. Sorted by key so lines are stable.
enum FlattenedMetadata {
    enum Value: Equatable {
        case string(String)
        case strings([String])
    }

    static func flatten(_ metadata: Logger.Metadata) -> [(key: String, value: Value)] {
        var out: [(key: String, value: Value)] = []
        func visit(_ prefix: String, _ value: Logger.MetadataValue) {
            switch value {
            case .string(let text): out.append((prefix, .string(text)))
            case .stringConvertible(let convertible): out.append((prefix, .string(convertible.description)))
            case .array(let items): out.append((prefix, .strings(items.map(\.description))))
            case .dictionary(let nested):
                for (key, inner) in nested { visit(prefix + "." + key, inner) }
            }
        }
        for (key, value) in metadata { visit(key, value) }
        return out.sorted { $0.key < $1.key }
    }

    /// Merges, in increasing precedence: the provider's metadata, the handler's, the call's.
    static func merge(
        handler: Logger.Metadata, provider: Logger.MetadataProvider?, event: Logger.Metadata?
    ) -> Logger.Metadata {
        var merged = provider?.get() ?? [:]
        merged.merge(handler) { _, new in new }
        if let event { merged.merge(event) { _, new in new } }
        return merged
    }
}
