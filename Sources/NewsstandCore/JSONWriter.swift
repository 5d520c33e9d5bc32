/// Appends JSON text to a byte buffer.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    package mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        // Runs without a byte to escape are appended whole: byte by byte, this was a tenth of `import`'s CPU.
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        default:
            raw("\\u00")
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        }
    }

    /// Writes `[a,b,…]`, each element by `element`.
    package mutating func array<T>(_ items: [T], _ element: (inout JSONWriter, T) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            element(&self, item)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    package mutating func integer(_ value: Int64) {
        bytes.append(contentsOf: String(value).utf8)
    }

    package mutating func optionalInteger(_ value: Int64?) {
        if let value { integer(value) } else { raw("null") }
    }

    package mutating func optionalString(_ value: String?) {
        if let value { string(value) } else { raw("null") }
    }

    package mutating func append(_ other: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: other)
    }

    package mutating func removeAll(keepingCapacity: Bool = true) {
        bytes.removeAll(keepingCapacity: keepingCapacity)
    }

    package mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// Writes `"key":` (with a leading comma unless `first`).
    package mutating func key(_ key: StaticString, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(key)
        raw("\":")
    }
}

extension JSONWriter {
    /// `{"name":"value",…}` with the names sorted, so that a record's bytes do not depend on hashing.
    package mutating func stringObject(_ object: [String: String]) {
        raw("{")
        for (index, key) in object.keys.sorted().enumerated() {
            if index > 0 { raw(",") }
            string(key)
            raw(":")
            string(object[key] ?? "")
        }
        raw("}")
    }
}
