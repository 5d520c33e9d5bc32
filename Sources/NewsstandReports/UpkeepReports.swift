import NewsstandCatalog
import NewsstandCore

// `verify --json` and `prune --json` write the library's own report values; their keys are these.

extension VerifyReport: Encodable {
    private enum CodingKeys: String, CodingKey {
        case reportVersion, issuesChecked, contentChecked, skippedInFlight, clean, problems
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(IssueReport.reportVersion, forKey: .reportVersion)
        try c.encode(issuesChecked, forKey: .issuesChecked)
        try c.encode(contentChecked, forKey: .contentChecked)
        try c.encode(skippedInFlight, forKey: .skippedInFlight)
        try c.encode(isClean, forKey: .clean)
        try c.encode(problems, forKey: .problems)
    }
}

extension VerifyReport.Problem: Encodable {
    private enum CodingKeys: String, CodingKey { case kind, path, detail, repaired }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind.rawValue, forKey: .kind)
        try c.encode(path, forKey: .path)
        try c.encode(detail, forKey: .detail)
        try c.encode(repaired, forKey: .repaired)
    }
}

extension PruneReport: Encodable {
    private enum CodingKeys: String, CodingKey {
        case reportVersion, dryRun, bytesFreed, bytesBefore, bytesAfter, overBudget, removed, spared
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(IssueReport.reportVersion, forKey: .reportVersion)
        try c.encode(dryRun, forKey: .dryRun)
        try c.encode(bytesFreed, forKey: .bytesFreed)
        try c.encode(bytesBefore, forKey: .bytesBefore)
        try c.encode(bytesAfter, forKey: .bytesAfter)
        try c.encode(overBudget, forKey: .overBudget)
        try c.encode(removed, forKey: .removed)
        try c.encode(spared, forKey: .spared)
    }
}

extension PruneReport.Removal: Encodable {
    private enum CodingKeys: String, CodingKey { case name, date, group, bytes, reasons }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(date.description, forKey: .date)
        try c.encode(group, forKey: .group)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(reasons.map(\.rawValue), forKey: .reasons)
    }
}

extension PruneReport.Spared: Encodable {
    private enum CodingKeys: String, CodingKey { case name, date, protection, reasons }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(date.description, forKey: .date)
        try c.encode(protection.rawValue, forKey: .protection)
        try c.encode(reasons.map(\.rawValue), forKey: .reasons)
    }
}
