// libFuzzer target for the catalog reader, `JSONReader.parse`, built with Sources/Newsstand/Catalog/JSON.swift
// (see `make fuzz`). Beyond "no crash, no memory error", every value that the writer can express (all but
// doubles) must survive a round trip: write it with `JSONWriter`, read it back, get the same value.
import Foundation
import FuzzSupport
import NewsstandCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONReader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard let value = try? JSONReader.parse(input) else { return 0 }
    // `list --json` checks stored records with `skipValue` instead of parsing them: whatever parses must
    // pass it too, and it must stop exactly where the document ends.
    var skipper = JSONReader(bytes: input)
    do {
        try skipper.skipValue()
    } catch {
        fatalError("parse accepted what skipValue refused (\(error))")
    }
    guard skipper.peek() == nil else { fatalError("skipValue stopped early, at byte \(skipper.i)") }
    var writer = JSONWriter()
    guard write(value, into: &writer) else { return 0 }
    writer.raw(" ")  // trailing whitespace is allowed; keeps the check honest about the end of the document
    let text = writer.bytes
    let again: JSONValue
    do {
        again = try text.withUnsafeBufferPointer { try JSONReader.parse($0) }
    } catch {
        fatalError("the writer's output does not parse (\(error)): \(String(decoding: text, as: UTF8.self))")
    }
    guard again == value else {
        fatalError("round trip changed the value: \(value) became \(again)")
    }
    return 0
}

/// Writes `value` with the writer's own primitives; false when it holds a double, which `JSONWriter` has no
/// call for (the catalog stores none).
private func write(_ value: JSONValue, into writer: inout JSONWriter) -> Bool {
    switch value {
    case .null: writer.raw("null")
    case .bool(let flag): writer.bool(flag)
    case .integer(let number): writer.integer(number)
    case .double: return false
    case .string(let text): writer.string(text)
    case .array(let items):
        writer.raw("[")
        for (index, item) in items.enumerated() {
            if index > 0 { writer.raw(",") }
            guard write(item, into: &writer) else { return false }
        }
        writer.raw("]")
    case .object(let members):
        writer.raw("{")
        for (index, (key, item)) in members.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.string(key)
            writer.raw(":")
            guard write(item, into: &writer) else { return false }
        }
        writer.raw("}")
    }
    return true
}

// Built for fuzzing, libFuzzer has the main and calls the function above; built plainly, this replays inputs.
#if !FUZZING
    @main
    enum Replay {
        static func main() { FuzzDriver.replay(fuzzJSONReader) }
    }
#endif
