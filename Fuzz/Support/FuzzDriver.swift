import CLibFuzzer
import Foundation

/// The one `main` of every fuzz target. Built for fuzzing (`make fuzz`: `-sanitize=fuzzer` and `-DFUZZING`),
/// it hands the target to libFuzzer's loop with its own command line. Built plainly (the everyday build), it
/// replays the files and folders named on the command line through the same checks, once each: the seed
/// corpora stay a regression test of the parsers (`make fuzz-replay`).
public enum FuzzDriver {
    public typealias Target = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

    public static func run(_ target: Target) -> Never {
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, target))
        #else
            var inputs = 0
            for path in CommandLine.arguments.dropFirst() {
                for file in files(at: path) {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        FileHandle.standardError.write(Data("error: cannot read \(file)\n".utf8))
                        exit(1)
                    }
                    _ = data.withUnsafeBytes { raw in
                        target(raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
                    }
                    inputs += 1
                }
            }
            print("replayed \(inputs) inputs")
            exit(0)
        #endif
    }

    /// A file, or the files of a folder in name order.
    private static func files(at path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            return [path]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { "\(path)/\($0)" }
    }
}
