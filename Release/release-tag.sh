#!/usr/bin/env bash
# `make release-tag`: tags HEAD with the version NewsstandInfo.version names, as an annotated semver tag
# (plain X.Y.Z, the form SwiftPM resolves `from:` against), after checking what a release needs: a clean
# tree, a CHANGELOG section for the version, and no tag of that name yet. The tag's message is that
# section. Nothing is pushed (`git push origin X.Y.Z` is the maintainer's step). DRY_RUN=1 checks and
# prints the message without tagging.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
version="$(bash Release/version.sh)"
fail() { echo "release-tag: $*" >&2; exit 1; }
# Semantic versioning 2.0.0: MAJOR.MINOR.PATCH, an optional pre-release; no leading zeros.
[[ "$version" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] \
  || fail "$version (NewsstandInfo.version) is not a semantic version X.Y.Z"
[ -z "$(git status --porcelain)" ] || fail "the work tree has uncommitted changes; commit or stash them first"
[ -f CHANGELOG.md ] || fail "there is no CHANGELOG.md"
# The section from its heading `## [X.Y.Z]` to the next `## ` heading.
notes="$(awk -v v="$version" '
  index($0, "## [" v "]") == 1 { on = 1; next }
  on && /^## / { exit }
  on { print }' CHANGELOG.md)"
[ -n "$(printf '%s' "$notes" | tr -d '[:space:]')" ] \
  || fail "CHANGELOG.md has no section '## [$version]' with the changes; add one first"
if git rev-parse -q --verify "refs/tags/$version" >/dev/null; then fail "the tag $version exists already"; fi
message="issues $version"$'\n\n'"$notes"
if [ "${DRY_RUN:-0}" = 1 ]; then
  printf 'release-tag: would tag %s as %s with:\n%s\n' "$(git rev-parse --short HEAD)" "$version" "$message"
  exit 0
fi
git tag -a "$version" -m "$message"
echo "release-tag: tagged $(git rev-parse --short HEAD) as $version (not pushed: git push origin $version)"
