import BusCore
import Foundation

#if FUZZING
    import CFuzzerDriver

    /// The fuzzing binary's entry (built with `-sanitize=fuzzer` and `-DFUZZING`: `deploy/fuzz`).
    /// SwiftPM links an executable's `main` to `<Module>_main`, so this is it, handing over to
    /// libFuzzer's driver with libFuzzer's usual arguments (`-runs=`, `-max_total_time=`, corpus folders).
    @_cdecl("BusFuzz_main")
    func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments) { bytes, size in
            BusFuzzInput.run(bytes.map { Data(bytes: $0, count: size) } ?? Data())
            return 0
        }
    }
#else
    /// Without libFuzzer: `bus-fuzz --write-seeds DIR` writes the seed corpus from real encodings;
    /// `bus-fuzz FILE|DIR…` replays inputs (a crash found by the fuzzer becomes a regression input).
    @main
    struct BusFuzzReplay {
        static func main() throws {
            var arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "--write-seeds", arguments.count == 2 {
                try SeedCorpus.write(to: URL(fileURLWithPath: arguments[1]))
                return
            }
            if arguments.isEmpty { arguments = ["Tests/Fuzz/corpus"] }
            var count = 0
            for path in arguments {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                    FileHandle.standardError.write(Data("bus-fuzz: no such file \(path)\n".utf8))
                    exit(2)
                }
                let files =
                    isFolder.boolValue
                    ? try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { "\(path)/\($0)" } : [path]
                for file in files {
                    BusFuzzInput.run(try Data(contentsOf: URL(fileURLWithPath: file)))
                    count += 1
                }
            }
            print("bus-fuzz: replayed \(count) inputs, no crash")
        }
    }
#endif
