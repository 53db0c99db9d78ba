#!/usr/bin/env python3
"""Object-space error between a BVH or glTF file and a glTF export of it, measured without cinestream.

    python3 .ci/gltf_error.py SOURCE.bvh|SOURCE.gltf|SOURCE.glb EXPORTED.glb|EXPORTED.gltf
                              [--max-cm 0.01] [--shell-cm 3] [--bvh-cm-per-unit 1] [--acl] [--json]

The sibling of bvh_error.py, sharing its BVH parser, kinematics and error
measure (ACL's virtual vertices: the bone's origin and the three points
SHELL cm along its local x, y and z axes, placed in object space by each
file; a bone's error is the largest distance between the two placements of
a point). The glTF side is read here with the standard library alone:

- `.glb`: the 12-byte header, the JSON chunk and the BIN chunk; `.gltf`: the
  JSON, its buffers from base64 `data:` URIs or files beside it.
- The bones are the nodes of the first skin (every node when there is no
  skin) and their ancestors, matched to the BVH joints by name; parents
  come from `children`.
- The first animation: every channel's keys are read from its output
  accessor (FLOAT, any byteStride). Key k is compared with BVH frame k,
  with no interpolation, so the keys must be the frames: the input
  accessor must hold one key per frame at k / rate (within an f32 step),
  with the `min` and `max` glTF requires, the rate equal to the BVH's
  (within 1e-4 relative), and every sampler LINEAR or STEP. A node without
  a channel for a path holds its rest value (`translation`, `rotation`,
  `scale` or `matrix`).
- A node's local transform is T * R * S (glTF's definition), object space is
  the product of 4x4 matrices down the hierarchy (glTF's, in f64), lengths
  are metres and become centimetres (the BVH's unit times
  --bvh-cm-per-unit).

A glTF source is read the same way as the export (its keys must be its
frames too, which .ci/scaled_rig.py writes) and key k is compared with key
k. The shell points are in real centimetres whatever scale a node carries
(an armature scaled by 0.0254 is measured 3 cm from each joint, not
0.0762; see bone_error in bvh_error.py).

When the glTF has one key fewer than the BVH has frames, the BVH is taken to
be a loop whose repeated last frame was dropped, as bvh_error.py does.
Exit status: 0 within --max-cm, 1 over it, 2 when a file cannot be read or
the two do not describe the same skeleton and frames.
"""

import argparse
import base64
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bvh_error import BvhError, keyed, mul, object_space, parse_bvh, report  # noqa: E402

PATHS = ("translation", "rotation", "scale")
WIDTH = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}


class GltfError(Exception):
    pass


def read_document(path):
    """(JSON object, list of buffers as bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    blob = None
    if data[:4] == b"glTF":
        if len(data) < 20:
            raise GltfError(f"{path}: GLB shorter than its header")
        _, version, length = struct.unpack_from("<4sII", data, 0)
        if version != 2 or length != len(data):
            raise GltfError(f"{path}: GLB version {version}, length {length} of {len(data)} bytes")
        at, chunks = 12, []
        while at < len(data):
            if at + 8 > len(data):
                raise GltfError(f"{path}: GLB chunk header cut at byte {at}")
            size, kind = struct.unpack_from("<II", data, at)
            if at + 8 + size > len(data):
                raise GltfError(f"{path}: GLB chunk at byte {at} runs past the end")
            chunks.append((kind, data[at + 8:at + 8 + size]))
            at += 8 + size
        if not chunks or chunks[0][0] != 0x4E4F534A:
            raise GltfError(f"{path}: GLB without a JSON chunk first")
        doc = json.loads(chunks[0][1].decode("utf-8"))
        if len(chunks) > 1 and chunks[1][0] == 0x004E4942:
            blob = chunks[1][1]
    else:
        doc = json.loads(data.decode("utf-8-sig"))
    buffers = []
    for i, buffer in enumerate(doc.get("buffers", [])):
        uri = buffer.get("uri")
        if uri is None:
            if i != 0 or blob is None:
                raise GltfError(f"{path}: buffers[{i}] has no uri and there is no GLB BIN chunk")
            raw = blob
        elif uri.startswith("data:"):
            head, _, payload = uri.partition(",")
            if not head.endswith(";base64"):
                raise GltfError(f"{path}: buffers[{i}] data URI is not base64")
            raw = base64.b64decode(payload, validate=True)
        else:
            with open(os.path.join(os.path.dirname(path), uri), "rb") as f:
                raw = f.read()
        if len(raw) < buffer["byteLength"]:
            raise GltfError(f"{path}: buffers[{i}] holds {len(raw)} bytes, byteLength {buffer['byteLength']}")
        buffers.append(raw)
    return doc, buffers


def accessor(doc, buffers, index, where):
    """The elements of a FLOAT accessor, each a tuple."""
    a = doc["accessors"][index]
    if a.get("componentType") != 5126 or a.get("type") not in WIDTH or "bufferView" not in a:
        raise GltfError(f"accessors[{index}] ({where}): expected FLOAT data in a bufferView")
    width, count = WIDTH[a["type"]], a["count"]
    view = doc["bufferViews"][a["bufferView"]]
    stride = view.get("byteStride", 4 * width)
    start = view.get("byteOffset", 0) + a.get("byteOffset", 0)
    data = buffers[view["buffer"]]
    end = start + stride * (count - 1) + 4 * width if count else start
    if end > view.get("byteOffset", 0) + view["byteLength"] or end > len(data):
        raise GltfError(f"accessors[{index}] ({where}): runs past its bufferView or buffer")
    fmt = "<%df" % width
    return [struct.unpack_from(fmt, data, start + i * stride) for i in range(count)]


def quat_matrix(q):
    """Row-major 3x3 of a quaternion (x, y, z, w), normalized."""
    x, y, z, w = q
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n == 0:
        raise GltfError("zero-length rotation")
    x, y, z, w = x / n, y / n, z / n, w / n
    return (
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
    )


def read_gltf(path, cm_per_metre=100.0):
    """Bones as (name, parent), the frame time, and per key a list of
    (row-major 3x3 linear part, origin in cm) in object space per bone."""
    doc, buffers = read_document(path)
    nodes = doc.get("nodes", [])
    parents = [None] * len(nodes)
    for p, node in enumerate(nodes):
        for c in node.get("children", []):
            parents[c] = p
    skins = doc.get("skins", [])
    seeds = skins[0]["joints"] if skins else range(len(nodes))
    wanted = set()
    for n in seeds:
        while n is not None and n not in wanted:
            wanted.add(n)
            n = parents[n]
    # Parents before children: depth first from the roots.
    order, stack = [], sorted((n for n in wanted if parents[n] is None), reverse=True)
    while stack:
        n = stack.pop()
        order.append(n)
        stack.extend(sorted((c for c in nodes[n].get("children", []) if c in wanted), reverse=True))
    slot = {n: i for i, n in enumerate(order)}

    animations = doc.get("animations", [])
    if not animations:
        raise GltfError(f"{path}: no animation")
    animation = animations[0]
    samplers = animation["samplers"]
    inputs = {s["input"] for s in samplers}
    if len(inputs) != 1:
        raise GltfError(f"{path}: samplers use {len(inputs)} input accessors; expected one shared")
    (input_index,) = inputs
    times = [t[0] for t in accessor(doc, buffers, input_index, "input")]
    bounds = doc["accessors"][input_index]
    if "min" not in bounds or "max" not in bounds:
        raise GltfError(f"{path}: the input accessor has no min and max")
    if bounds["min"] != [min(times)] or bounds["max"] != [max(times)]:
        raise GltfError(f"{path}: input min/max {bounds['min']}/{bounds['max']} are not the keys'")
    for s in samplers:
        if s.get("interpolation", "LINEAR") not in ("LINEAR", "STEP"):
            raise GltfError(f"{path}: a sampler is {s['interpolation']}; keys would not be values")
    keys = len(times)
    frame_time = times[-1] / (keys - 1) if keys > 1 else None
    for k, t in enumerate(times):
        if frame_time is not None and abs(t - k * frame_time) > 2.0 ** -22 * max(t, 1.0):
            raise GltfError(f"{path}: key {k} at {t} s, not {k} x {frame_time} s")

    # Per bone and path: one value per key (animated) or the rest value.
    tracks = []
    for n in order:
        node = nodes[n]
        if "matrix" in node:
            raise GltfError(f"{path}: nodes[{n}] has a matrix; this checker reads TRS only")
        rest = [node.get("translation", [0, 0, 0]), node.get("rotation", [0, 0, 0, 1]),
                node.get("scale", [1, 1, 1])]
        tracks.append([[tuple(v)] * keys for v in rest])
    for c, channel in enumerate(animation["channels"]):
        target = channel["target"]
        if target.get("node") not in slot or target.get("path") not in PATHS:
            continue
        values = accessor(doc, buffers, samplers[channel["sampler"]]["output"],
                          f"animations[0].channels[{c}]")
        if len(values) != keys:
            raise GltfError(f"{path}: channel {c} has {len(values)} keys, the input {keys}")
        tracks[slot[target["node"]]][PATHS.index(target["path"])] = values

    frames = []
    for k in range(keys):
        out = []
        for i, n in enumerate(order):
            t, q, s = (track[k] for track in tracks[i])
            r = quat_matrix(q)
            linear = tuple(r[row * 3 + col] * s[col] for row in range(3) for col in range(3))
            origin = [v * cm_per_metre for v in t]
            p = parents[n]
            if p is not None:
                pl, pt = out[slot[p]]
                origin = [
                    pl[0] * origin[0] + pl[1] * origin[1] + pl[2] * origin[2] + pt[0],
                    pl[3] * origin[0] + pl[4] * origin[1] + pl[5] * origin[2] + pt[1],
                    pl[6] * origin[0] + pl[7] * origin[1] + pl[8] * origin[2] + pt[2],
                ]
                linear = mul(pl, linear)
            out.append((linear, origin))
        frames.append(out)
    names = [nodes[n].get("name", f"node{n}") for n in order]
    bones = [(names[i], None if parents[n] is None else slot[parents[n]]) for i, n in enumerate(order)]
    return bones, frame_time, frames


def compare_gltf(args):
    """A glTF source against a glTF export: both read by read_gltf, bones
    matched by name with the same parents, key k against key k."""
    try:
        source_bones, source_frame_time, source_frames = read_gltf(args.source)
        bones, frame_time, frames = read_gltf(args.exported)
    except (GltfError, ValueError, KeyError, IndexError, TypeError, OSError,
            UnicodeDecodeError, struct.error) as e:
        print(f"error: {e!r}" if not isinstance(e, GltfError) else f"error: {e}", file=sys.stderr)
        return 2

    class Named:
        def __init__(self, name):
            self.name = name

    keys_a = keyed([Named(name) for name, _ in source_bones])
    keys_b = keyed([Named(name) for name, _ in bones])
    if keys_a.keys() != keys_b.keys():
        print(f"error: bones differ: only in {args.source}: {sorted(k[0] for k in keys_a.keys() - keys_b.keys())};"
              f" only in {args.exported}: {sorted(k[0] for k in keys_b.keys() - keys_a.keys())}",
              file=sys.stderr)
        return 2
    for key, ia in keys_a.items():
        pa, pb = source_bones[ia][1], bones[keys_b[key]][1]
        if (pa is None) != (pb is None) or (pa is not None and source_bones[pa][0] != bones[pb][0]):
            print(f"error: bone {key[0]!r} has different parents", file=sys.stderr)
            return 2
    if (source_frame_time is None) != (frame_time is None) or (
            frame_time is not None and abs(frame_time / source_frame_time - 1) > 1e-4):
        print(f"error: frame times differ: {source_frame_time} s and {frame_time} s", file=sys.stderr)
        return 2
    n_a, n_b = len(source_frames), len(frames)
    compare = [(f, f) for f in range(min(n_a, n_b))]
    wrapped = n_b == n_a - 1
    if wrapped:
        compare.append((n_a - 1, 0))
    elif n_a != n_b:
        print(f"error: {n_a} keys in {args.source}, {n_b} keys in {args.exported}", file=sys.stderr)
        return 2
    pairs = [(i, keys_b[k]) for k, i in sorted(keys_a.items(), key=lambda kv: kv[1])]
    names = [name for name, _ in source_bones]
    return report(args, compare, pairs, names, wrapped, "the first key",
                  lambda fa, fb: (source_frames[fa], frames[fb]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("exported")
    parser.add_argument("--max-cm", type=float, default=0.01)
    parser.add_argument("--shell-cm", type=float, default=3.0)
    parser.add_argument("--bvh-cm-per-unit", type=float, default=1.0)
    parser.add_argument("--acl", action="store_true",
                        help="judge by the 3 shell points alone, as ACL and the codec do")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.source.lower().endswith((".gltf", ".glb")):
        return compare_gltf(args)
    try:
        joints, (frame_time, rows) = parse_bvh(args.source)
        bones, gltf_frame_time, frames = read_gltf(args.exported, 100.0 / args.bvh_cm_per_unit)
    except (BvhError, GltfError, ValueError, KeyError, IndexError, TypeError, OSError,
            UnicodeDecodeError, struct.error) as e:
        print(f"error: {e!r}" if not isinstance(e, (BvhError, GltfError)) else f"error: {e}",
              file=sys.stderr)
        return 2
    keys_a = keyed(joints)

    class Named:
        def __init__(self, name):
            self.name = name

    keys_b = keyed([Named(name) for name, _ in bones])
    if keys_a.keys() != keys_b.keys():
        only_a = sorted(k[0] for k in keys_a.keys() - keys_b.keys())
        only_b = sorted(k[0] for k in keys_b.keys() - keys_a.keys())
        print(f"error: bones differ: only in {args.source}: {only_a}; only in {args.exported}: {only_b}",
              file=sys.stderr)
        return 2
    for key, ia in keys_a.items():
        pa = joints[ia].parent
        pb = bones[keys_b[key]][1]
        if (pa is None) != (pb is None) or (pa is not None and joints[pa].name != bones[pb][0]):
            print(f"error: bone {key[0]!r} has different parents", file=sys.stderr)
            return 2
    n_a, n_b = len(rows), len(frames)
    if gltf_frame_time is not None and abs(gltf_frame_time / frame_time - 1) > 1e-4:
        print(f"error: frame times differ: {frame_time} s and {gltf_frame_time} s", file=sys.stderr)
        return 2
    pairs = [(i, keys_b[k]) for k, i in sorted(keys_a.items(), key=lambda kv: kv[1])]
    compare = [(f, f) for f in range(min(n_a, n_b))]
    wrapped = n_b == n_a - 1
    if wrapped:
        compare.append((n_a - 1, 0))
    elif n_a != n_b:
        print(f"error: {n_a} frames in {args.source}, {n_b} keys in {args.exported}", file=sys.stderr)
        return 2

    unit = args.bvh_cm_per_unit
    names = [joint.name for joint in joints]
    return report(args, compare, pairs, names, wrapped, "the first key",
                  lambda fa, fb: ([(r, [v * unit for v in t]) for r, t in object_space(joints, rows[fa])],
                                  frames[fb]))


if __name__ == "__main__":
    sys.exit(main())
