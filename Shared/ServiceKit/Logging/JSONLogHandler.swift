import Bus
import Foundation
import Logging

/// Writes each log event as one JSON object on one line, for log collectors:
///
/// ```json
/// {"timestamp":"2026-11-22T02:44:00.123Z","level":"info","service":"legal","label":"legal.rpc",
///  "message":"listening","source":"ServiceKit","port":"5551","request.id":"42"}
/// ```
///
/// Metadata is flattened into the object (nested dictionaries as dotted keys); a metadata key that
/// would overwrite one of the fixed fields is written as `metadata.<key>` instead. An error attached
/// to the event is written as `error`.
public struct JSONLogHandler: LogHandler {
    static let fixedKeys: Set<String> = ["timestamp", "level", "service", "label", "message", "source", "error"]

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let service: String
    private let output: LogOutput

    /// - Parameters:
    ///   - label: the logger's label, e.g. `legal.rpc`.
    ///   - service: the service name written on every line, so lines from many services can be told apart.
    public init(
        label: String, service: String, logLevel: Logger.Level = .info, output: LogOutput = .standardOutput,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.service = service
        self.logLevel = logLevel
        self.output = output
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var members: [(key: String, encodedValue: String)] = [
            ("timestamp", JSONString.quoted(Timestamp.format(Date()))),
            ("level", JSONString.quoted(event.level.rawValue)),
            ("service", JSONString.quoted(service)),
            ("label", JSONString.quoted(label)),
            ("message", JSONString.quoted(event.message.description)),
            ("source", JSONString.quoted(event.source)),
        ]
        if let error = event.error {
            members.append(("error", JSONString.quoted(String(describing: error))))
        }
        let merged = FlattenedMetadata.merge(handler: metadata, provider: metadataProvider, event: event.metadata)
        for (key, value) in FlattenedMetadata.flatten(merged) {
            let encoded: String
            switch value {
            case .string(let text): encoded = JSONString.quoted(text)
            case .strings(let items): encoded = "[" + items.map(JSONString.quoted).joined(separator: ",") + "]"
            }
            members.append((Self.fixedKeys.contains(key) ? "metadata." + key : key, encoded))
        }
        output.emit(JSONString.object(members))
    }
}
