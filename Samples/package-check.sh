#!/usr/bin/env bash
# Builds and runs a throw-away package that depends on this one the way a user's package does:
# `.package(url:from:)` with product Newsstand, resolved from a bare clone of HEAD tagged 0.2.0.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --bare -q "$root" "$work/issues.git"
git -C "$work/issues.git" tag 0.2.0 HEAD
mkdir -p "$work/app/Sources/app"
cat > "$work/app/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "app",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "file://$work/issues.git", from: "0.2.0")],
    targets: [
        .executableTarget(name: "app", dependencies: [.product(name: "Newsstand", package: "issues")])
    ]
)
SWIFT
cat > "$work/app/Sources/app/main.swift" <<'SWIFT'
import Foundation
import Newsstand

// Opens a library, adds an issue with an asset, and reads it back through the public API.
let folder = URL(fileURLWithPath: CommandLine.arguments[1], isDirectory: true)
let library = try await Library.open(at: folder)
guard let date = IssueDate("2026-11-20"), let url = URL(string: "https://example.com/daily/2026-11-20.zip") else {
    fatalError("constant inputs")
}
try await library.addIssue(named: "The Daily 2026-11-20", date: date, assets: [AssetRequest(url: url)])
let summaries = try await library.summaries()
print(summaries.map { "\($0.name) \($0.date) \($0.status.rawValue) \($0.assetsTotal)" }.joined(separator: "\n"))
try await library.shutdown()
SWIFT
swift build --package-path "$work/app" 2>&1 | tail -n 3
out="$("$work/app/.build/debug/app" "$work/library")"
echo "$out"
[ "$out" = "The Daily 2026-11-20 2026-11-20 none 1" ] || { echo "package-check: unexpected output" >&2; exit 1; }
echo "package-check: a package depending on Newsstand 0.2.0 by URL built and ran"
