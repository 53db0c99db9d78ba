#!/usr/bin/env python3
"""Writes a glTF rig whose armature node carries a scale, as Blender and
three.js exports do, for the real-centimetre checks in CI.

    python3 .ci/scaled_rig.py OUT.gltf [--armature-scale 0.0254] [--seconds 8]

The rig is a small character in real centimetres (hips, spine, head and jaw,
an arm down to a finger, a leg, a four-bone tail) under an `Armature` node
turned from Z-up to Y-up and scaled by --armature-scale; every offset below
it is divided by that scale, so the rig's real size and motion do not
depend on it. Every joint turns a few degrees at its own frequencies with a
small fast wobble, the hips travel, and the jaw squashes and stretches
non-uniformly. Keys are LINEAR at 30 Hz, one shared input accessor, so a
key is a frame (what .ci/gltf_error.py compares). Standard library only.
"""

import argparse
import base64
import json
import math
import struct

RATE = 30.0

# (name, parent index, offset from the parent in real cm); index 0 is the armature.
RIG = [
    ("Armature", None, (0.0, 0.0, 0.0)),
    ("Hips", 0, (0.0, 95.0, 0.0)),
    ("Spine", 1, (0.0, 12.0, 1.0)),
    ("Chest", 2, (0.0, 15.0, -1.0)),
    ("Neck", 3, (0.0, 20.0, 0.0)),
    ("Head", 4, (0.0, 10.0, 2.0)),
    ("Jaw", 5, (0.0, -2.0, 6.0)),
    ("Shoulder.L", 3, (8.0, 16.0, 0.0)),
    ("Arm.L", 7, (12.0, 0.0, 0.0)),
    ("Forearm.L", 8, (28.0, 0.0, 0.0)),
    ("Hand.L", 9, (25.0, 0.0, 0.0)),
    ("Finger.L", 10, (9.0, 0.0, 1.0)),
    ("Thigh.R", 1, (-9.0, -5.0, 0.0)),
    ("Shin.R", 12, (0.0, -44.0, 1.0)),
    ("Foot.R", 13, (0.0, -42.0, -2.0)),
    ("Tail.0", 1, (0.0, -3.0, -10.0)),
    ("Tail.1", 15, (0.0, 0.0, -12.0)),
    ("Tail.2", 16, (0.0, 0.0, -11.0)),
    ("Tail.3", 17, (0.0, 0.0, -10.0)),
]


def euler_xyz(x, y, z):
    """Quaternion (x, y, z, w) of rotations about x, then y, then z (intrinsic XYZ)."""
    def axis(i, a):
        q = [0.0, 0.0, 0.0, math.cos(a / 2)]
        q[i] = math.sin(a / 2)
        return q

    def mul(a, b):
        ax, ay, az, aw = a
        bx, by, bz, bw = b
        return [aw * bx + ax * bw + ay * bz - az * by,
                aw * by - ax * bz + ay * bw + az * bx,
                aw * bz + ax * by - ay * bx + az * bw,
                aw * bw - ax * bx - ay * by - az * bz]

    return mul(mul(axis(0, x), axis(1, y)), axis(2, z))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--armature-scale", type=float, default=0.0254)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    k = args.armature_scale
    keys = int(args.seconds * RATE) + 1
    times = [i / RATE for i in range(keys)]

    blob = bytearray()
    accessors, views = [], []

    def add(values, kind):
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[kind]
        flat = [float(c) for v in values for c in (v if width > 1 else (v,))]
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": 4 * len(flat)})
        blob.extend(struct.pack("<%df" % len(flat), *flat))
        accessor = {"bufferView": len(views) - 1, "componentType": 5126,
                    "count": len(values), "type": kind}
        if kind == "SCALAR":
            # f32 key times, as the file stores them.
            stored = struct.unpack("<%df" % len(flat), struct.pack("<%df" % len(flat), *flat))
            accessor["min"], accessor["max"] = [min(stored)], [max(stored)]
        accessors.append(accessor)
        return len(accessors) - 1

    time_accessor = add(times, "SCALAR")
    nodes = []
    samplers, channels = [], []
    for b, (name, parent, offset) in enumerate(RIG):
        node = {"name": name}
        if parent is None:
            node["rotation"] = [-math.sin(math.pi / 4), 0.0, 0.0, math.cos(math.pi / 4)]
            node["scale"] = [k, k, k]
        else:
            node["translation"] = [c / 100.0 / k for c in offset]
            phase = b * 0.7
            rotations = [euler_xyz(0.35 * math.sin(1.3 * t + phase) + 0.01 * math.sin(17.0 * t + phase),
                                   0.25 * math.cos(0.9 * t + 2.0 * phase),
                                   0.30 * math.sin(1.7 * t + phase) + 0.008 * math.cos(23.0 * t))
                         for t in times]
            animated = [("rotation", add(rotations, "VEC4"))]
            if name == "Hips":
                moves = [[(offset[0] / 100.0 + 0.8 * t) / k,
                          (offset[1] / 100.0 + 0.03 * math.sin(4.0 * t)) / k,
                          (offset[2] / 100.0 + 0.1 * t) / k] for t in times]
                animated.append(("translation", add(moves, "VEC3")))
            if name == "Jaw":
                squash = [[1.0 + 0.3 * math.sin(2.1 * t), 1.0 - 0.25 * math.sin(1.4 * t),
                           1.0 + 0.1 * math.cos(3.3 * t)] for t in times]
                animated.append(("scale", add(squash, "VEC3")))
            for path, output in animated:
                samplers.append({"input": time_accessor, "output": output, "interpolation": "LINEAR"})
                channels.append({"sampler": len(samplers) - 1, "target": {"node": b, "path": path}})
        nodes.append(node)
    for b, (_, parent, _) in enumerate(RIG):
        if parent is not None:
            nodes[parent].setdefault("children", []).append(b)

    doc = {
        "asset": {"version": "2.0", "generator": "cinestream .ci/scaled_rig.py"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": nodes,
        "animations": [{"name": "scaled", "samplers": samplers, "channels": channels}],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(blob)).decode()}],
    }
    with open(args.out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
