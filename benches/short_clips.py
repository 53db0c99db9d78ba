#!/usr/bin/env python3
"""File sizes of short clips: cinestream against ACL on the same clips.

Cuts the first N samples of a dozen clips of ../shared/data/bandai-namco-1
(N = 1, 2, 5, 10, 26 by default), compresses each with ACL 2.1 (the
../shared/acl/ harness's `acl_batch`, ACL's defaults) and packs it with
`cinestream pack --preview-cm 0`, with its skeleton and with
`--skeleton-by-reference`, and prints the totals per length.

    cargo build --release -p cinestream-tools
    bash ../shared/acl/build.sh --no-cargo      # target/acl/bin/acl_batch
    python3 benches/short_clips.py [--clips 12] [--every 1] [--lengths 1,2,5,10,26]

Standard library only. Everything it writes goes to a temporary folder.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile


def cut_bvh(text, frames):
    """The BVH `text` with only its first `frames` frames."""
    head, motion = text.split("MOTION", 1)
    lines = [l for l in motion.strip().splitlines()]
    # "Frames: n", "Frame Time: t", then one line per frame.
    out = [head + "MOTION", f"Frames: {frames}", lines[1]] + lines[2 : 2 + frames]
    if len(out) - 3 < frames:
        raise ValueError("the clip is shorter than that")
    return "\n".join(out) + "\n"


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=os.path.join(root, "..", "shared", "data", "bandai-namco-1"))
    p.add_argument("--acl", default=os.path.join(root, "..", "shared", "acl"))
    p.add_argument("--acl-bin", default=os.path.join(root, "target", "acl", "bin"))
    p.add_argument("--cine", default=os.path.join(root, "target", "release", "cinestream"))
    p.add_argument("--clips", type=int, default=12)
    p.add_argument("--every", type=int, default=1,
                   help="take every K-th clip in name order (14: across the whole set)")
    p.add_argument("--lengths", default="1,2,5,10,26")
    args = p.parse_args()
    lengths = [int(n) for n in args.lengths.split(",")]
    clips = sorted(f for f in os.listdir(args.data) if f.endswith(".bvh"))[:: args.every]
    clips = clips[: args.clips]
    print(f"{len(clips)} clips of {args.data}: {clips[0]} .. {clips[-1]}")
    print("samples  ACL bytes  cine bytes (skeleton stored)  cine bytes (by reference)  "
          "stored/ACL  by-reference/ACL  clips over ACL (by reference)")
    with tempfile.TemporaryDirectory() as tmp:
        for n in lengths:
            acl_inputs, totals = [], {"stored": 0, "reference": 0}
            by_reference = []
            for clip in clips:
                stem = os.path.join(tmp, f"{clip[:-4]}-{n}")
                with open(os.path.join(args.data, clip)) as f:
                    text = cut_bvh(f.read(), n)
                with open(stem + ".bvh", "w") as f:
                    f.write(text)
                subprocess.run([sys.executable, os.path.join(args.acl, "bvh2acl.py"),
                                stem + ".bvh", stem + ".acl.sjson"], check=True,
                               stdout=subprocess.DEVNULL)
                acl_inputs.append(stem + ".acl.sjson")
                for kind, extra in (("stored", []), ("reference", ["--skeleton-by-reference"])):
                    out = f"{stem}-{kind}.cine"
                    subprocess.run([args.cine, "pack", stem + ".bvh", "-o", out,
                                    "--preview-cm", "0", *extra], check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    totals[kind] += os.path.getsize(out)
                    if kind == "reference":
                        by_reference.append(os.path.getsize(out))
            rows = subprocess.run([os.path.join(args.acl_bin, "acl_batch"), "--no-error",
                                   *acl_inputs], check=True, capture_output=True, text=True)
            table = [r for r in csv.DictReader(io.StringIO(rows.stdout))
                     if not r["clip"].startswith("#")]
            acl = sum(int(r["compressed_bytes"]) for r in table)
            # acl_batch reports the clips in the order it was given them.
            over = sum(c > int(r["compressed_bytes"]) for c, r in zip(by_reference, table))
            print(f"{n:7d}  {acl:9d}  {totals['stored']:28d}  {totals['reference']:25d}  "
                  f"{totals['stored'] / acl:10.3f}  {totals['reference'] / acl:16.3f}  {over:14d}")


if __name__ == "__main__":
    main()
