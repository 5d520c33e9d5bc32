#!/usr/bin/env bash
# `make api-test`: schemathesis (run as `python3 -m schemathesis.cli`, wherever pip put its `st`) sends generated requests to `issues serve` on a temporary library and checks
# every answer against the committed OpenAPI document (Sources/NewsstandServer/API/openapi.json): no server
# error, no schema violation, every status documented. `subscribe` is left out: its generated URLs would be
# fetched, and this test talks to 127.0.0.1 only.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ISSUES_BIN=${ISSUES_BIN:-$root/.build/debug/issues}
EXAMPLES=${API_TEST_EXAMPLES:-200}
work=$(mktemp -d "${TMPDIR:-/tmp}/issues-api-test.XXXXXX")
export ISSUES_LIBRARY=$work/library
serve_pid=""
cleanup() {
    local status=$?
    if [[ -n $serve_pid ]]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT

"$ISSUES_BIN" add 'Daily Loop 2026-11-19' --date 2026-11-19 >/dev/null
"$ISSUES_BIN" add '<script>alert(1)</script> onerror=x' --date 2026-11-20 >/dev/null
"$ISSUES_BIN" add 'Field Notes November 2026' --date 2026-11-01 >/dev/null
"$ISSUES_BIN" serve --listen 127.0.0.1:0 2>"$work/serve.log" &
serve_pid=$!
for _ in $(seq 200); do
    grep -q 'on http://127.0.0.1:' "$work/serve.log" && break
    kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
    sleep 0.05
done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -n 1)
token=$(curl -sf "$base/api/session" | python3 -c 'import json, sys; print(json.load(sys.stdin)["csrfToken"])')
echo "issues serve at $base"

status=0
python3 -m schemathesis.cli run "$base/api/openapi.json" --url "$base" --checks all --max-examples "$EXAMPLES" --seed 29 \
    --exclude-operation-id subscribe \
    -H "X-CSRF-Token: $token" -H "Origin: $base" --request-timeout 30 --no-color \
    --report ndjson --report-ndjson-path "$work/events.ndjson" | tee "$work/st.log" || status=$?

# The number of requests schemathesis sent: every recorded interaction in its event log.
requests=$(python3 - "$work/events.ndjson" <<'PY'
import json, sys

def count(node):
    if isinstance(node, dict):
        found = len(node["interactions"]) if isinstance(node.get("interactions"), (dict, list)) else 0
        return found + sum(count(v) for k, v in node.items() if k != "interactions")
    if isinstance(node, list):
        return sum(count(v) for v in node)
    return 0

print(sum(count(json.loads(line)) for line in open(sys.argv[1])))
PY
)
echo "schemathesis requests: $requests"
kill "$serve_pid"; wait "$serve_pid" && serve_status=0 || serve_status=$?
serve_pid=""
echo "issues serve exited with status $serve_status after SIGTERM"
[[ $serve_status == 0 ]] || status=1
exit "$status"
