import Foundation
import Locks

/// Which threads poll a process's ZeroMQ sockets, from `BUS_EVENT_LOOP` (deploy/BUS.md, "Threads").
public enum BusEventLoopMode: String, Sendable, CaseIterable {
    /// One ``BusEventLoop`` thread polls every socket of the process and is the task executor that
    /// request handlers run on, so a request does not change threads between its socket and its
    /// handler.
    case single
    /// Each socket on a thread of its own; handlers run on the cooperative pool.
    case perSocket = "per-socket"

    /// The variable that chooses the mode.
    public static let variable = "BUS_EVENT_LOOP"
    public static let defaultMode: BusEventLoopMode = .perSocket

    /// The mode named by `value` (`nil` or empty: the default), or an error that names the choices.
    /// Without regard to case, as `BusSettings` (`EnvironmentReader.choice`) reads every choice:
    /// a process that reads the variable here (a tool, a benchmark) takes what a service takes.
    public static func parse(_ value: String?) throws -> BusEventLoopMode {
        guard let value, !value.isEmpty else { return defaultMode }
        guard let mode = allCases.first(where: { $0.rawValue.lowercased() == value.lowercased() }) else {
            let choices = allCases.map(\.rawValue).joined(separator: ", ")
            throw BusError(.invalidArgument, "\(variable)=\(value): expected one of \(choices)")
        }
        return mode
    }

    private static let chosen = LockedValue<BusEventLoopMode?>(nil)

    /// The mode sockets opened from now on use: the one ``use(_:)`` set, else the environment's
    /// (an unknown value is the default here; `BusSettings` refuses it at a service's start).
    public static var current: BusEventLoopMode {
        chosen.withLock { chosen in
            if let chosen { return chosen }
            let mode = (try? parse(ProcessInfo.processInfo.environment[variable])) ?? defaultMode
            chosen = mode
            return mode
        }
    }

    /// Sets the mode for sockets opened from now on (a service at start, from its settings; the
    /// benchmark, to measure both in one run). Sockets already open keep theirs.
    public static func use(_ mode: BusEventLoopMode) { chosen.withLock { $0 = mode } }
}
