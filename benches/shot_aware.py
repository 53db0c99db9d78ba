#!/usr/bin/env python3
"""Shot-aware compression on mocap: the error bound in pixels through a
camera, against the strict object-space bound, on actors of
../shared/data/bandai-namco-1 side by side.

The actors' BVH files have no camera, so this script writes one, as a
sequencer would export it: a glTF file with one perspective camera (50
degrees vertical field of view, 4K) that dollies across the front of the
cast at chest height, looking at it, written here from the glTF 2.0
specification (a node, a camera, a linear translation channel, and the
field of view driven through KHR_animation_pointer). `pack --camera-clip`
joins it to the actors; `verify --camera-clip` joins it to the sources
again and measures every virtual vertex on screen with its own projection.

    python3 benches/shot_aware.py                 # ten actors, five minutes (as .ci/run)
    python3 benches/shot_aware.py --actors 3 --seconds 20

Needs target/release/cinestream (cargo build --release). Prints sizes,
ratios and the worst errors measured by `verify`.
"""

import argparse
import base64
import json
import math
import pathlib
import re
import struct
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CLI = ROOT / "target" / "release" / "cinestream"


def run(*args):
    out = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"cinestream {' '.join(map(str, args))} failed:\n{out.stderr}")
    return out


def bvh_roots(path):
    """Positions (cm) of the BVH joint that moves most, one per frame: the
    hips under a still root."""
    text = path.read_text()
    header, motion = text.split("MOTION", 1)
    columns, at = [], 0
    for match in re.finditer(r"CHANNELS\s+(\d+)\s+([^\n]*)", header):
        names = match.group(2).split()
        if "Xposition" in names:
            columns.append([at + names.index(axis + "position") for axis in "XYZ"])
        at += int(match.group(1))
    rows = [[float(v) for v in line.split()] for line in motion.strip().splitlines()[2:] if line.strip()]
    def spread(c):
        xs = [r[c[0]] for r in rows]
        zs = [r[c[2]] for r in rows]
        return max(xs) - min(xs) + max(zs) - min(zs)
    best = max(columns, key=spread)
    return [[r[i] for i in best] for r in rows]


def dolly_gltf(path, start, end, seconds, fov_degrees):
    """A glTF camera that moves from `start` to `end` (metres) in
    `seconds`, looking down its -Z axis, with a constant field of view
    driven by KHR_animation_pointer (the importer takes a camera whose
    field of view an animation drives)."""
    times = struct.pack("<2f", 0.0, seconds)
    positions = struct.pack("<6f", *start, *end)
    yfov = math.radians(fov_degrees)
    fovs = struct.pack("<2f", yfov, yfov)
    data = times + positions + fovs
    doc = {
        "asset": {"version": "2.0", "generator": "cinestream benches/shot_aware.py"},
        "extensionsUsed": ["KHR_animation_pointer"],
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Dolly", "camera": 0, "translation": list(start)}],
        "cameras": [
            {
                "type": "perspective",
                "perspective": {"yfov": yfov, "aspectRatio": 16 / 9, "znear": 0.05},
            }
        ],
        "buffers": [
            {
                "byteLength": len(data),
                "uri": "data:application/octet-stream;base64," + base64.b64encode(data).decode(),
            }
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 24},
            {"buffer": 0, "byteOffset": 32, "byteLength": 8},
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR",
             "min": [0.0], "max": [seconds]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5126, "count": 2, "type": "SCALAR"},
        ],
        "animations": [
            {
                "name": "dolly",
                "samplers": [
                    {"input": 0, "output": 1, "interpolation": "LINEAR"},
                    {"input": 0, "output": 2, "interpolation": "LINEAR"},
                ],
                "channels": [
                    {"sampler": 0, "target": {"node": 0, "path": "translation"}},
                    {
                        "sampler": 1,
                        "target": {
                            "path": "pointer",
                            "extensions": {
                                "KHR_animation_pointer": {
                                    "pointer": "/cameras/0/perspective/yfov"
                                }
                            },
                        },
                    },
                ],
            }
        ],
    }
    path.write_text(json.dumps(doc, indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "bandai-namco-1"))
    parser.add_argument("--actors", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--screen-px", type=float, default=0.5)
    parser.add_argument("--fov", type=float, default=50.0, help="vertical, degrees")
    parser.add_argument("--work", help="keep the files here (default: a temporary directory)")
    args = parser.parse_args()
    clips = sorted(pathlib.Path(args.data).glob("*.bvh"))
    if not clips:
        sys.exit(f"no BVH files in {args.data}")
    frames = [int(re.search(r"Frames:\s*(\d+)", c.read_text()).group(1)) for c in clips]
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(args.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        # Actor k plays the corpus in order from clip 17 k on (as .ci/run).
        takes = []
        for actor in range(args.actors):
            take, seconds, i = [], 0.0, 17 * actor
            while seconds < args.seconds:
                take.append(clips[i % len(clips)])
                seconds += frames[i % len(clips)] / 30
                i += 1
            packed, bvh = work / f"take{actor}.cine", work / f"take{actor}.bvh"
            run("pack", "--sequence", *take, "-o", packed)
            run("export", packed, "-o", bvh)
            takes.append(bvh)
        # Frame the whole cast: its roots' extent over the whole scene.
        roots = [p for t in takes for p in bvh_roots(t)]
        lo = [min(p[a] for p in roots) for a in range(3)]
        hi = [max(p[a] for p in roots) for a in range(3)]
        centre = [(l + h) / 2 for l, h in zip(lo, hi)]
        half_width = (hi[0] - lo[0]) / 2
        # Far enough in front (+Z) that the cast's width fills the frame's.
        aspect = 16 / 9
        half_h = math.tan(math.radians(args.fov) / 2)
        distance = max(300.0, (hi[2] - lo[2]) / 2 + half_width / (half_h * aspect) * 0.8)
        z = hi[2] + distance - (hi[2] - lo[2]) / 2
        start = [(centre[0] - half_width * 0.5) / 100, 1.2, z / 100]
        end = [(centre[0] + half_width * 0.5) / 100, 1.2, z / 100]
        seconds = min(len(bvh_roots(t)) for t in takes) / 30
        camera = work / "dolly.gltf"
        dolly_gltf(camera, start, end, seconds, args.fov)
        print(f"cast: {args.actors} actors, roots x {lo[0]:.0f}..{hi[0]:.0f} cm, "
              f"z {lo[2]:.0f}..{hi[2]:.0f} cm; dolly at z {z:.0f} cm, height 120 cm, "
              f"x {start[0] * 100:.0f} -> {end[0] * 100:.0f} cm over {seconds:.1f} s, "
              f"{args.fov:g} degrees")
        strict = work / "scene.cine"
        strict_camera = work / "scene-camera.cine"
        shot = work / "scene-shot.cine"
        run("pack", "--actors", *takes, "--preview-cm", "0", "-o", strict)
        run("pack", "--actors", *takes, "--screen-px", args.screen_px, "--camera-clip", camera,
            "--preview-cm", "0", "-o", shot)
        # The strict file with the same camera, for the same bones and tracks.
        run("pack", "--actors", *takes, "--camera-clip", camera, "--preview-cm", "0",
            "-o", strict_camera)
        sizes = {p.name: p.stat().st_size for p in (strict, strict_camera, shot)}
        raw = json.loads(run("pack", "--actors", *takes, "--preview-cm", "0", "--json",
                             "-o", work / "raw.cine").stdout)["raw_bytes"]
        print(f"raw {raw} bytes")
        for name, size in sizes.items():
            print(f"{name:20} {size:>10} bytes, {raw / size:6.2f} : 1")
        print(f"shot-aware / strict with the camera: {sizes['scene-camera.cine'] / sizes['scene-shot.cine']:.3f} x smaller")
        verify = run("verify", shot, "--against", *takes, "--actors", "--camera-clip", camera,
                     "--json")
        r = json.loads(verify.stdout)
        s = r["screen"]
        print(f"verify: ok {r['ok']}, on screen max {s['worst_px']:.3f} px over {s['vertices']} "
              f"vertices in the image (bound {s['pixels']} px), object space max "
              f"{r['max_error_cm']:.4f} cm (ceiling {s['max_cm']} cm), camera {s['camera_cm']:.5f} cm")
        strict_check = json.loads(run("verify", strict_camera, "--against", *takes, "--actors",
                                      "--camera-clip", camera, "--screen-px", args.screen_px,
                                      "--json").stdout)
        print(f"the strict file through the same camera: max "
              f"{strict_check['screen']['worst_px']:.3f} px")
        if not r["ok"]:
            sys.exit("the shot-aware file failed verify")


if __name__ == "__main__":
    main()
