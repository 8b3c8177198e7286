import Bus
import Foundation
import Logging

/// Writes each log event as one human-readable line:
///
/// `2026-11-22T02:44:00.123Z info legal.rpc: listening port=5551 request.id=42 [ServiceKit]`
///
/// Same fields as ``JSONLogHandler`` (except the service name, which a person running one service
/// knows), metadata flattened and sorted.
public struct TextLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: LogOutput

    public init(
        label: String, logLevel: Logger.Level = .info, output: LogOutput = .standardOutput,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.logLevel = logLevel
        self.output = output
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = "\(Timestamp.format(Date())) \(event.level.rawValue) \(label): \(event.message)"
        if let error = event.error {
            line += " error=\(String(describing: error))"
        }
        let merged = FlattenedMetadata.merge(handler: metadata, provider: metadataProvider, event: event.metadata)
        for (key, value) in FlattenedMetadata.flatten(merged) {
            switch value {
            case .string(let text): line += " \(key)=\(text)"
            case .strings(let items): line += " \(key)=[\(items.joined(separator: ", "))]"
            }
        }
        output.emit(line + " [\(event.source)]")
    }
}
