#!/usr/bin/env bash
# The `issues` tour: a sample publisher on a local server, a throw-away library, and the real CLI
# adding, downloading, surviving `kill -9`, resuming, listing and showing issues; then the
# sample-reader app embedding the Newsstand library. Run by `make demo` after the build.
#
#   bash Samples/demo.sh
#
# Binaries default to .build/debug/...; ISSUES_BIN, SAMPLE_SERVER_BIN and SAMPLE_READER_BIN override
# them (the tests point them at another build folder). The libraries are made with mktemp -d (so
# under $TMPDIR) and kept for a look afterwards; everything else is deleted on exit.
#
# The interrupted download: the large podcast episode is served by a second sample-server started
# with --rate, so its download reliably lasts several seconds and `kill -9` lands mid-way. (With
# --cut-after the server would drop the connection itself and the downloader would simply retry and
# finish: that shows a network cut, not a crash.) For the resume, that server is restarted on the
# same port without --rate, the way a publisher's server comes back: same URL, same ETag, full speed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
ISSUES_BIN=${ISSUES_BIN:-$root/.build/debug/issues}
SAMPLE_SERVER_BIN=${SAMPLE_SERVER_BIN:-$root/.build/debug/sample-server}
SAMPLE_READER_BIN=${SAMPLE_READER_BIN:-$root/.build/debug/sample-reader}
THROTTLE_RATE=${THROTTLE_RATE:-6291456}  # bytes per second for the large episode: 6 MiB/s
KILL_AFTER=${KILL_AFTER:-12582912}       # kill -9 the download once this many bytes are on disk

started_at=$SECONDS
fail() { echo "error: $*" >&2; exit 1; }
heading() { printf '\n==> %s\n' "$*"; }
# Shows a command the way a user would type it, then runs it (stderr too, so the order is kept).
show_cmd() {
    local word out=""
    for word in "$@"; do
        if [[ $word =~ ^[A-Za-z0-9_./:=+-]+$ || $word == '|' || $word == '&' || $word == '&&' ]]; then
            out+=" $word"
        else
            out+=" '${word//\'/\'\\\'\'}'"
        fi
    done
    printf '$%s\n' "$out"
}
issues() { show_cmd issues "$@"; "$ISSUES_BIN" "$@" 2>&1; }

for bin in "$ISSUES_BIN" "$SAMPLE_SERVER_BIN" "$SAMPLE_READER_BIN"; do
    [[ -x $bin ]] || fail "$bin is not built; run \`make demo\` (or swift build) first"
done
command -v python3 >/dev/null || fail "python3 is needed for the sample publisher; \`make demo-deps\` installs it"

work=$(mktemp -d "${TMPDIR:-/tmp}/issues-demo.XXXXXX")
library=$(mktemp -d "${TMPDIR:-/tmp}/issues-demo-library.XXXXXX")
reader_library=$(mktemp -d "${TMPDIR:-/tmp}/issues-demo-reader.XXXXXX")
feed_library=$(mktemp -d "${TMPDIR:-/tmp}/issues-demo-feeds.XXXXXX")
export ISSUES_LIBRARY=$library
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY

server_pid="" throttled_pid="" download_pid=""
stop() {  # stop PID: SIGTERM, then wait for it
    [[ -n $1 ]] || return 0
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    local status=$?
    if [[ -n $download_pid ]]; then kill -9 "$download_pid" 2>/dev/null || true; fi
    stop "$server_pid"
    stop "$throttled_pid"
    rm -rf "$work"
    if (( status != 0 )); then
        echo "demo failed (exit $status); libraries left in $library, $reader_library and $feed_library" >&2
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME [ARGS...]: starts sample-server on the publisher folder; sets $port and $pid.
start_server() {
    local name=$1; shift
    rm -f "$work/$name.port"
    "$SAMPLE_SERVER_BIN" --root "$work/publisher" --port-file "$work/$name.port" "$@" >"$work/$name.log" 2>&1 &
    pid=$!
    local tries=0
    until [[ -s $work/$name.port ]]; do
        kill -0 "$pid" 2>/dev/null || { cat "$work/$name.log" >&2; fail "sample-server ($name) did not start"; }
        (( ++tries < 200 )) || fail "sample-server ($name) wrote no port file within 10 s"
        sleep 0.05
    done
    port=$(<"$work/$name.port")
    echo "sample-server ($name, pid $pid) listening on http://127.0.0.1:$port${*:+ ($*)}"
}

# json_field JSON_FILE KEY...: prints the value at that path (list indexes are numbers; a list
# prints as its length).
json_field() {
    python3 -c 'import json, sys
value = json.load(open(sys.argv[1]))
for key in sys.argv[2:]:
    value = value[int(key)] if isinstance(value, list) else value[key]
print(len(value) if isinstance(value, list) else value)' "$@"
}

heading "generating the sample publisher"
python3 "$here/publisher/make_publisher.py" --out "$work/publisher"
catalog=$work/publisher/catalog.json
# One line per issue: name, date, asset path, sha256, size, unpack (0/1), large (the one to interrupt).
python3 - "$catalog" >"$work/issues.tsv" <<'PY'
import json, sys
catalog = json.load(open(sys.argv[1]))
rows = [(i, a) for p in catalog["publications"] for i in p["issues"] for a in i["assets"]]
largest = max(a["size"] for _, a in rows)
for i, a in rows:
    fields = [i["name"], i["date"], a["path"], a["sha256"], a["size"], int(a["unpack"]), int(a["size"] == largest)]
    print("\t".join(map(str, fields)))
PY
echo "catalog: $(wc -l <"$work/issues.tsv") issues in $catalog"

heading "starting the sample servers"
start_server main
server_pid=$pid base="http://127.0.0.1:$port"
start_server throttled --rate "$THROTTLE_RATE"
throttled_pid=$pid throttled_port=$port throttled_base="http://127.0.0.1:$port"

heading "adding issues to a throw-away library ($library)"
names=() big_name="" big_sha="" big_size=0
while IFS=$'\t' read -r -u 3 name date path sha size unpack large; do
    issues add "$name" --date "$date"
    url=$base/$path
    if (( large )); then
        url=$throttled_base/$path big_name=$name big_sha=$sha big_size=$size
    else
        names+=("$name")
    fi
    flags=()
    (( unpack )) || flags=(--no-unpack)
    issues add-asset "$name" "$url" --sha256 "$sha" "${flags[@]}"
done 3<"$work/issues.tsv"
[[ -n $big_name ]] || fail "the catalog has no large episode"

heading "downloading ${#names[@]} issues, 4 at a time"
issues download --jobs 4 "${names[@]}"

heading "downloading '$big_name' (throttled to $((THROTTLE_RATE / 1048576)) MiB/s) and killing it with kill -9"
show_cmd issues download "$big_name" '&'
"$ISSUES_BIN" download "$big_name" >"$work/interrupted.log" 2>&1 &
download_pid=$!
on_disk=0 tries=0
while (( on_disk < KILL_AFTER )); do
    if ! kill -0 "$download_pid" 2>/dev/null; then
        cat "$work/interrupted.log"
        fail "the download ended before it could be interrupted; try a lower THROTTLE_RATE"
    fi
    (( ++tries < 300 )) || fail "no progress on '$big_name' within 60 s"
    sleep 0.2
    "$ISSUES_BIN" show "$big_name" --json >"$work/show.json"
    on_disk=$(json_field "$work/show.json" assets 0 receivedBytes)
done
# bash announces a job killed by a signal ("Killed") on stderr at the next command; silence that
# one notice, then check the exit status ourselves.
exec 3>&2 2>/dev/null
kill -9 "$download_pid" || true
status=0
wait "$download_pid" || status=$?
:
exec 2>&3 3>&-
echo "killed pid $download_pid with kill -9 after $on_disk bytes were on disk (exit status $status)"
download_pid=""
sed 's/^/  | /' "$work/interrupted.log"
(( status == 137 )) || fail "the download should have died of SIGKILL (137), not exited with $status"
issues show "$big_name"
"$ISSUES_BIN" show "$big_name" --json >"$work/show.json"
before=$(json_field "$work/show.json" assets 0 receivedBytes)
(( before > 0 && before < big_size )) || fail "expected a partial file after kill -9, found $before of $big_size bytes"

heading "restarting the publisher's server at full speed on the same port, then resuming"
stop "$throttled_pid"
throttled_pid=""
start_server restarted --port "$throttled_port"
throttled_pid=$pid
issues resume
"$ISSUES_BIN" show "$big_name" --json >"$work/show.json"
[[ $(json_field "$work/show.json" status) == available ]] || fail "'$big_name' is not available after resume"
big_file=$("$ISSUES_BIN" path "$big_name")/$(json_field "$work/show.json" assets 0 fileName)
actual=$(sha256sum "$big_file" | cut -d' ' -f1)
echo "sha256 of $big_file:"
echo "  $actual (on disk)"
echo "  $big_sha (catalog)"
[[ $actual == "$big_sha" ]] || fail "the resumed file's sha256 does not match the catalog"
echo "resumed file verified: sha256 matches the catalog ($big_size bytes; $before were kept from before the kill)"

heading "listing the library"
issues list
"$ISSUES_BIN" list --status available --json >"$work/list.json"
(( $(json_field "$work/list.json") == $(wc -l <"$work/issues.tsv") )) || fail "not every issue is available"

heading "one issue in detail"
first=$(head -n 1 "$work/issues.tsv" | cut -f1)
issues show "$first"

heading "its content folder"
issues path "$first"
folder=$("$ISSUES_BIN" path "$first")
show_cmd cd "$folder" '&&' find . -type f '|' sort '|' head -n 12
(cd "$folder" && find . -type f | sort | head -n 12)  # a few hundred bytes: head never cuts sort off
[[ -f $folder/index.html ]] || fail "$folder/index.html was not unpacked"

heading "the sample reader app (Samples/SampleReader) into a second library"
show_cmd sample-reader "$reader_library" "$catalog" "$base" "$first"
"$SAMPLE_READER_BIN" "$reader_library" "$catalog" "$base" "$first" 2>&1

heading "subscriptions: the publisher's feeds become issues by themselves ($feed_library)"
python3 "$here/publisher/make_feeds.py" --publisher "$work/publisher" --base "$base"
export ISSUES_LIBRARY=$feed_library
issues subscribe "$base/feeds/podcast.rss" --initial 1
issues subscribe "$base/feeds/daily-loop.atom" --initial 2 --keep 2
issues subscribe "$base/feeds/field-notes.json"
issues subscribe "$base/feeds/quarterly.json" --no-download
issues subscribe "$base/api/HPImageArchive.json" --name 'Daily Picture' --map "$root/Samples/mappings/daily-picture.json" --initial all

heading "covers: from a feed's image, an EPUB's declared cover, a PDF's page 1, else a placeholder"
issues subscribe "$base/feeds/cover-stories.rss" --initial all
for name in 'Cover Stories 1: feed art' 'Cover Stories 2: an EPUB' 'Cover Stories 3: a PDF' 'Cover Stories 4: nothing'; do
    issues show "$name" | grep -E '^(name|cover|  *refused):'
done
issues covers  # every issue of the subscribed library: those made already are kept
shelf=$(mktemp "${TMPDIR:-/tmp}/issues-demo-shelf.XXXXXX.png")
issues contact-sheet "$shelf" --across 5
for name in 'Cover Stories 1: feed art' 'Cover Stories 2: an EPUB' 'Cover Stories 3: a PDF' 'Cover Stories 4: nothing'; do
    "$ISSUES_BIN" show "$name" --json | python3 -c 'import json, sys
issue = json.load(sys.stdin); cover = issue.get("cover") or {}
expected = {"1": "feed", "2": "epub", "3": "pdf", "4": "placeholder"}[issue["name"].split(":")[0][-1]]
sys.exit(0 if cover.get("source") == expected else f"{issue['name']}: cover from {cover.get('source')}, not {expected}")' \
        || fail "a cover did not come from its source"
done
echo "the contact sheet of the shelf: $shelf"

heading "a sync round with nothing new: every feed answers 304 or an unchanged body, and the catalog is not written"
catalog_sum() { (cd "$feed_library" && find library.json .catalog -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }
before=$(catalog_sum)
issues sync
after=$(catalog_sum)
echo "catalog checksum before: $before, after: $after"
[[ $before == "$after" ]] || fail "an unchanged sync wrote to the catalog"

heading "the publisher adds an episode; the next sync adds and downloads it"
python3 "$here/publisher/make_feeds.py" --publisher "$work/publisher" --base "$base" --extra-episode
issues sync
issues subscriptions
issues list
issues show 'Loopback Podcast #43'
export ISSUES_LIBRARY=$library

heading "stopping the sample servers"
stop "$server_pid"; echo "stopped pid $server_pid"; server_pid=""
stop "$throttled_pid"; echo "stopped pid $throttled_pid"; throttled_pid=""

heading "keeping the library healthy: pin one issue, see what a prune would remove, verify"
issues pin "$first"
issues prune --keep 1 --dry-run
issues verify

heading "done in $((SECONDS - started_at)) s"
echo "the library is at $library (ISSUES_LIBRARY=$library issues list)"
echo "the sample reader's library is at $reader_library, the subscribed one at $feed_library"
echo "all are throw-away: rm -rf $library $reader_library $feed_library"
