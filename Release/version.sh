#!/usr/bin/env bash
# Prints the version NewsstandInfo.version names: the one version source, read by package-check and
# release-tag so that no script keeps a copy of its own.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(sed -n 's/^ *public static let version = "\([0-9][0-9.]*[0-9A-Za-z.-]*\)".*/\1/p' \
  "$root/Sources/NewsstandCore/NewsstandInfo.swift")"
[ -n "$version" ] || { echo "version.sh: no version in Sources/NewsstandCore/NewsstandInfo.swift" >&2; exit 1; }
printf '%s\n' "$version"
