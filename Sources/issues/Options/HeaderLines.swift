import Newsstand

/// `--header 'Name: value'` lines (curl's `-H` form), as `add-asset` and `subscribe` take them.
enum HeaderLines {
    /// The headers by name; a name given twice (in any case) is refused.
    /// - Throws: `.invalidHeader`, whose message never quotes a value.
    static func parse(_ lines: [String]) throws -> [String: String] {
        var result: [String: String] = [:]
        for line in lines {
            let (name, value) = try AssetRequest.parseHeader(line)
            if result.keys.contains(where: { $0.lowercased() == name.lowercased() }) {
                throw NewsstandError(.invalidHeader, "the request header \(name.debugDescription) is given twice")
            }
            result[name] = value
        }
        return result
    }
}
