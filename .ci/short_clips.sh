#!/usr/bin/env bash
# Short-clip file sizes, cinestream against ACL, per clip length.
#
#   bash .ci/short_clips.sh [CINE] [ACL_BATCH]
#
# Cuts the first 1, 2, 5, 10 and 26 samples of twelve clips of
# ../shared/data/bandai-namco-1 (every 14th file), converts each cut with
# ../shared/acl/bvh2acl.py, compresses it with ACL (acl_batch, ACL's defaults) and with
# `cinestream pack --preview-cm 0` (no preview tier), and prints per clip length the
# summed `.cine` bytes, the summed ACL compressed-clip bytes, their ratio, the worst
# clip's ratio, and where the `.cine` bytes go (`inspect --json` sizes, summed: header,
# metadata with the part of it that is bone names, index, alignment padding, segment
# headers and keys). Work files go to a temporary folder that is removed on exit.
set -euo pipefail
ROOT="$(git rev-parse --show-toplevel)"
CINE="${1:-$ROOT/target/release/cinestream}"
ACL="${2:-$ROOT/target/acl/bin/acl_batch}"
DATA="$ROOT/../shared/data/bandai-namco-1"
B2A="$ROOT/../shared/acl/bvh2acl.py"
[[ -d "$DATA" ]] || { echo "skip: $DATA missing" >&2; exit 0; }
[[ -x "$ACL" ]] || { echo "error: $ACL missing (bash ../shared/acl/build.sh)" >&2; exit 1; }
TMP="$(mktemp -d /tmp/short-clips.XXXXXX)"
# KEEP=1 keeps the work files (cuts, .acl.sjson, .cine, inspect JSON) and prints where.
if [[ -n "${KEEP:-}" ]]; then echo "work files kept in $TMP" >&2; else trap 'rm -rf "$TMP"' EXIT; fi
mapfile -t CLIPS < <(ls "$DATA"/*.bvh | awk 'NR % 14 == 1' | head -12)
printf "samples  clips  cine_bytes  acl_bytes  cine/acl  worst_clip  | header  metadata  (names)  index  padding  seg_headers  keys\n"
for n in 1 2 5 10 26; do
  cine=0; acl=0; worst=0
  for c in "${CLIPS[@]}"; do
    s="$(basename "$c" .bvh)_$n"
    # The hierarchy, then "Frames: n", then the first n motion lines.
    awk -v n="$n" '
      /^Frames:/ { print "Frames:\t" n; next }
      /^Frame Time:/ { print; body = 1; k = 0; next }
      body { if (k < n) print; k++; next }
      { print }' "$c" > "$TMP/$s.bvh"
    python3 "$B2A" "$TMP/$s.bvh" "$TMP/$s.acl.sjson" > /dev/null
    "$CINE" pack "$TMP/$s.bvh" --preview-cm 0 -o "$TMP/$s.cine" > /dev/null
    "$CINE" inspect --json "$TMP/$s.cine" > "$TMP/$s.json"
    cb=$(stat -c %s "$TMP/$s.cine")
    ab=$("$ACL" --no-error "$TMP/$s.acl.sjson" 2>/dev/null | awk -F, '!/^#/ && !/^clip/ { print $6; exit }')
    cine=$((cine + cb)); acl=$((acl + ab))
    worst=$(python3 -c "print(max($worst, $cb / $ab))")
  done
  parts=$(python3 - "$TMP" "$n" <<'PY'
import glob, json, sys
keys = ["header_bytes", "metadata_bytes", "names", "index_bytes", "padding_bytes", "segment_header_bytes", "key_bytes"]
tot = dict.fromkeys(keys, 0)
for p in glob.glob(f"{sys.argv[1]}/*_{sys.argv[2]}.json"):
    d = json.load(open(p))
    for k in keys:
        tot[k] += d["sizes"][k] if k != "names" else sum(len(b["name"].encode()) for b in d["skeleton"])
print("  ".join(str(tot[k]) for k in keys))
PY
)
  printf "%7d  %5d  %10d  %9d  %8.3f  %.3f  | %s\n" "$n" "${#CLIPS[@]}" "$cine" "$acl" \
    "$(python3 -c "print($cine / $acl)")" "$worst" "$parts"
done
