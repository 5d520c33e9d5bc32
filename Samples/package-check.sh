#!/usr/bin/env bash
# Builds and runs a throw-away package that depends on this one the way a user's package does:
# `.package(url:from:)` with product Newsstand, resolved from a bare clone of HEAD tagged with the version
# NewsstandInfo.version names (the one version source).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(bash "$root/Release/version.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --bare -q "$root" "$work/issues.git"
git -C "$work/issues.git" tag -f "$version" HEAD  # a clone of a released tree has the tag already, on an older commit
mkdir -p "$work/app/Sources/app"
cat > "$work/app/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "app",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "file://$work/issues.git", from: "$version")],
    targets: [
        .executableTarget(name: "app", dependencies: [.product(name: "Newsstand", package: "issues")])
    ]
)
SWIFT
# The app is the README's API example itself (Samples/API/main.swift), run against a local web server:
# once where the download works (exit 0) and once where it fails (exit 1).
cp "$root/Samples/API/main.swift" "$work/app/Sources/app/main.swift"
# As on a machine without the image libraries: pkg-config sees libarchive alone (a copy of its .pc file), so a
# build that reached for libvips or poppler (the NewsstandCovers product, which this package does not name)
# would fail here.
mkdir -p "$work/pkgconfig"
cp "$(pkg-config --variable=pcfiledir libarchive)/libarchive.pc" "$work/pkgconfig/"
PKG_CONFIG_LIBDIR="$work/pkgconfig" swift build --package-path "$work/app" 2>&1 | tail -n 3
# The web server (`issues serve`, on Hummingbird) is its own target: a package using Newsstand never builds it.
# (SwiftPM makes an empty MODULE.build folder for every target it knows; a built one holds objects.)
for module in Hummingbird HummingbirdCore NewsstandServer; do
    if compgen -G "$work/app/.build/debug/$module.build/*.o" >/dev/null || [ -e "$work/app/.build/debug/Modules/$module.swiftmodule" ]; then
        echo "package-check: building Newsstand built $module" >&2
        exit 1
    fi
done
echo "package-check: neither Hummingbird nor NewsstandServer was built"
mkdir -p "$work/www/daily"
printf 'The Daily\n' > "$work/www/daily/today.txt"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$work/www" > "$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
port=""
for _ in $(seq 100); do
    port="$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$work/server.log" | head -n 1)"
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "package-check: the web server did not start" >&2; exit 1; }
app="$work/app/.build/debug/app"
if ldd "$app" | grep -E 'libvips|libpoppler|libcairo'; then
    echo "package-check: a program depending on Newsstand alone links an image library" >&2
    exit 1
fi
out="$("$app" "$work/library" "http://127.0.0.1:$port/daily/today.txt")"
echo "$out"
file="$(printf '%s\n' "$out" | sed -n 's/^downloaded //p')"
[ -n "$file" ] && [ "$(cat "$file")" = "The Daily" ] || { echo "package-check: the example did not download" >&2; exit 1; }
status=0
"$app" "$work/library-2" "http://127.0.0.1:$port/daily/missing.txt" || status=$?
[ "$status" = 1 ] || { echo "package-check: a failed download exited $status, not 1" >&2; exit 1; }
echo "package-check: a package depending on Newsstand $version by URL built (pkg-config seeing libarchive alone),"
echo "package-check: links no image library, and ran the README example"
