import Foundation

/// The benchmarks' few options (`--seconds 5`), read from the command line without a parser
/// dependency: a missing or unparsable value is the default.
public enum BenchArguments {
    public static func int(_ name: String, default value: Int) -> Int {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let parsed = Int(arguments[index + 1]) else {
            return value
        }
        return parsed
    }

    public static func flag(_ name: String) -> Bool { CommandLine.arguments.contains(name) }
}
