import Foundation

/// The replayer of every fuzz target. Built for fuzzing (`make fuzz`: `--sanitize fuzzer`, so SwiftPM
/// compiles the target as a library and libFuzzer brings `main`), a target is only its
/// `LLVMFuzzerTestOneInput`. Built plainly (the everyday build), its top-level code calls this: the files and
/// folders named on the command line go through the same checks, once each, so that the seed corpora stay a
/// regression test of the parsers (`make fuzz-replay`).
public enum FuzzDriver {
    public typealias Target = (UnsafePointer<UInt8>?, Int) -> CInt

    public static func replay(_ target: Target) -> Never {
        var inputs = 0
        for path in CommandLine.arguments.dropFirst() {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("error: cannot read \(file)\n".utf8))
                    exit(1)
                }
                _ = data.withUnsafeBytes { raw in target(raw.bindMemory(to: UInt8.self).baseAddress, raw.count) }
                inputs += 1
            }
        }
        print("replayed \(inputs) inputs")
        exit(0)
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
