#!/usr/bin/env python3
"""Writes a version-3 library (the JSON-lines catalog that releases before 0.5 kept) as those releases laid it
out: records and folder claims in buckets `.catalog/issues-D/<first D hex digits of the key>.jsonl`, saved
downloads as hard links to one anchor per issue in `.catalog/pending`, the event log in `.catalog/events.jsonl`,
and `library.json` naming version 3 and the bucket depth. What the upgrade tests and the bench upgrade.

usage: make_v3_library.py LIBRARY COUNT [--assets N] [--pending N] [--events N]
"""
import argparse
import hashlib
import json
import os
import unicodedata


def key(text):
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode()).hexdigest()[:32]


def digits_for(count):
    digits = 2
    while digits < 6 and count > 40 << (4 * digits):
        digits += 1
    return digits


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("count", type=int)
    parser.add_argument("--assets", type=int, default=2)
    parser.add_argument("--pending", type=int, default=0, help="issues whose first asset is a saved download")
    parser.add_argument("--events", type=int, default=0)
    args = parser.parse_args()
    catalog = os.path.join(args.library, ".catalog")
    digits = digits_for(args.count)
    buckets = {}
    pending = []
    for n in range(args.count):
        name = f"Gazette {n:07d}"
        day = 1 + n % 28
        assets = []
        for a in range(args.assets):
            asset_id = f"{n:012x}{a:04x}"
            downloading = n < args.pending and a == 0
            assets.append({
                "error": None, "expectedBytes": 1000 + a, "fileName": None if downloading else f"part{a}.pdf",
                "id": asset_id, "isArchive": False, "receivedBytes": 0 if downloading else 1000 + a,
                "state": "downloading" if downloading else "downloaded", "unpack": True,
                "url": f"https://cdn.example.com/{n}/part{a}.pdf",
            })
            if downloading:
                pending.append((asset_id, key(name)))
        status = "downloading" if n < args.pending else "available"
        record = {"assets": assets, "date": f"2026-{1 + n % 12:02d}-{day:02d}", "folder": name, "name": name,
                  "status": status, "version": 2}
        k = key(name)
        line = json.dumps({"key": k, "issue": record}, separators=(",", ":"), sort_keys=False)
        buckets.setdefault(k[:digits], []).append((k, line))
        fk = key(name.lower())
        buckets.setdefault(fk[:digits], []).append((fk, json.dumps({"key": fk, "claim": k}, separators=(",", ":"))))
    folder = os.path.join(catalog, f"issues-{digits}")
    os.makedirs(folder, exist_ok=True)
    for prefix, lines in buckets.items():
        with open(os.path.join(folder, prefix + ".jsonl"), "w") as f:
            for _, line in sorted(lines):
                f.write(line + "\n")
    os.makedirs(os.path.join(catalog, "pending"), exist_ok=True)
    for asset_id, k in pending:
        anchor = os.path.join(catalog, "pending", ".issue-" + k)
        if not os.path.exists(anchor):
            with open(anchor, "w") as f:
                f.write(k)
        os.link(anchor, os.path.join(catalog, "pending", asset_id))
    with open(os.path.join(catalog, "events.jsonl"), "w") as f:
        for cursor in range(1, args.events + 1):
            f.write(json.dumps({"cursor": cursor, "id": f"event-{cursor}", "kind": "issue.added",
                                "time": "2026-11-20T06:00:00.000Z"}, separators=(",", ":")) + "\n")
    with open(os.path.join(catalog, "index.jsonl"), "w") as f:
        f.write('{"index":2,"liveBytes":0}\n')
    with open(os.path.join(args.library, "library.json"), "w") as f:
        f.write(json.dumps({"bucketDigits": digits, "catalog": ".catalog", "version": 3}) + "\n")


if __name__ == "__main__":
    main()
