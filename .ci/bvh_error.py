#!/usr/bin/env python3
"""Object-space error between two BVH files, measured without cinestream.

    python3 .ci/bvh_error.py SOURCE.bvh EXPORTED.bvh [--max-cm 0.01] [--shell-cm 3] [--json]

This is an independent check of `cinestream export`: it parses both files
itself (any channel order, CRLF or CR line ends, End Site blocks, several
ROOTs), runs forward kinematics in double precision and computes the
Animation Compression Library's virtual-vertex error. For every bone at
every frame, the bone's origin and the three points SHELL cm along its local
x, y and z axes are placed in object space by each file's pose; the bone's
error is the largest distance between the two placements of a point.

BVH reading, as the format is commonly understood: a joint's rotation is
the product of its rotation channels in the order listed (column vectors,
degrees), its translation is its OFFSET with each position channel replacing
that component, a joint name is the rest of its ROOT/JOINT line. Bones are
matched by name (the n-th bone of a name with the n-th of the same name), so
the two files may nest them in different orders. Both files must be in the
same length unit (centimetres for the corpus); BVH does not say.

When the second file has one frame fewer than the first, the first is taken
to be a loop whose repeated last frame was dropped: its last frame is
compared with the second file's first frame as well.

Prints the max and p99 error (nearest rank, over every bone at every frame)
in cm. Exit status: 0 within --max-cm, 1 over it, 2 when a file cannot be
read or the two do not describe the same skeleton and frames.
"""

import argparse
import json
import math
import re
import sys

AXES = {"x": 0, "y": 1, "z": 2}


class BvhError(Exception):
    pass


class Joint:
    __slots__ = ("name", "parent", "offset", "channels", "first")

    def __init__(self, name, parent):
        self.name = name
        self.parent = parent
        self.offset = None
        self.channels = []  # ("pos" | "rot", axis index)
        self.first = 0  # index of its first channel in a frame


END_SITE = -1  # a block that is no joint


def parse_bvh(path):
    """Joints (parents before children) and (frame time, frames, each a list of floats)."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8-sig")
    # Only \r\n, \r and \n end a line (str.splitlines also splits on \v, \f, ...).
    lines = re.split(r"\r\n|\r|\n", text)
    joints = []
    stack = []  # open blocks, innermost last: joint indices or END_SITE
    pending = None  # a block named on an earlier line, waiting for its '{'
    channels = 0
    at = 0

    def fail(message):
        raise BvhError(f"{path} line {at + 1}: {message}")

    def in_joint():
        return bool(stack) and stack[-1] != END_SITE

    while at < len(lines):
        rest = lines[at].strip()
        if at == 0:
            if rest[:9].upper() != "HIERARCHY":
                fail(f"expected HIERARCHY, found {rest[:40]!r}")
            rest = rest[9:].strip()
        while rest:
            if rest[0] == "{":
                if pending is None:
                    fail("'{' without ROOT, JOINT or End Site")
                stack.append(pending)
                pending = None
                rest = rest[1:].strip()
                continue
            if pending is not None:
                fail(f"expected '{{', found {rest[:40]!r}")
            if rest[0] == "}":
                if not stack:
                    fail("unbalanced '}'")
                stack.pop()
                rest = rest[1:].strip()
                continue
            parts = rest.split(None, 1)
            word, tail = parts[0], (parts[1].strip() if len(parts) > 1 else "")
            key = word.upper()
            rest = ""
            if key in ("ROOT", "JOINT", "END"):
                name = tail
                opens = name.endswith("{")
                if opens:
                    name = name[:-1].strip()
                if key == "END":
                    if name.upper() != "SITE" or not in_joint():
                        fail(f"unexpected 'End {name}'")
                    block = END_SITE
                else:
                    if not name:
                        fail(f"{key} without a name")
                    if key == "JOINT" and not in_joint():
                        fail(f"JOINT {name!r} outside a joint")
                    if key == "ROOT" and stack:
                        fail(f"ROOT {name!r} inside another block")
                    joints.append(Joint(name, stack[-1] if key == "JOINT" else None))
                    block = len(joints) - 1
                if opens:
                    stack.append(block)
                else:
                    pending = block
            elif key == "OFFSET":
                values = tail.split()
                if len(values) != 3 or not stack:
                    fail("expected OFFSET x y z inside a block")
                if stack[-1] != END_SITE:
                    joints[stack[-1]].offset = [float(v) for v in values]
            elif key == "CHANNELS":
                parts = tail.split()
                if not parts or not in_joint():
                    fail("CHANNELS outside a joint or without a count")
                count = int(parts[0])
                names = parts[1:]
                if len(names) != count:
                    fail(f"CHANNELS declares {count} but lists {len(names)}")
                joint = joints[stack[-1]]
                joint.first = channels
                for n in names:
                    low = n.lower()
                    if len(low) != 9 or low[0] not in AXES or low[1:] not in ("position", "rotation"):
                        fail(f"unknown channel {n!r}")
                    joint.channels.append((low[1:4], AXES[low[0]]))
                channels += count
            elif key == "MOTION":
                if stack or not joints:
                    fail("MOTION inside an open block or before any ROOT")
                return joints, parse_motion(path, lines, at + 1, channels)
            else:
                fail(f"unexpected {word!r}")
        at += 1
    raise BvhError(f"{path}: no MOTION section")


def parse_motion(path, lines, start, channels):
    frames = frame_time = None
    at = start
    while at < len(lines) and (frames is None or frame_time is None):
        line = lines[at].strip()
        at += 1
        if not line:
            continue
        head, sep, value = line.partition(":")
        key = " ".join(head.split()).lower()
        if not sep or key not in ("frames", "frame time"):
            raise BvhError(f"{path} line {at}: expected 'Frames:' and 'Frame Time:', found {line[:40]!r}")
        if key == "frames":
            frames = int(value)
        else:
            frame_time = float(value)
    if frames is None or frame_time is None:
        raise BvhError(f"{path}: MOTION without 'Frames:' and 'Frame Time:'")
    values = [float(v) for line in lines[at:] for v in line.split()]
    if len(values) != frames * channels:
        raise BvhError(f"{path}: {len(values)} values after the MOTION header, "
                       f"expected {frames} frames x {channels} channels")
    rows = [values[i * channels:(i + 1) * channels] for i in range(frames)]
    return frame_time, rows


def mul(a, b):
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (
        a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
        a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
        a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8,
    )


# Right-multiplying by a rotation about axis X, Y or Z mixes the other two
# columns, (i, k) in cyclic order: new i = c i + s k, new k = c k - s i.
OTHER_AXES = {0: (1, 2), 1: (2, 0), 2: (0, 1)}


def object_space(joints, row):
    """Per joint: (rotation, origin) in object space at one frame.

    Rotations are row-major 3x3 tuples acting on column vectors.
    """
    out = []
    radians, cos, sin = math.radians, math.cos, math.sin
    for j in joints:
        t = list(j.offset or (0.0, 0.0, 0.0))
        r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        for n, (kind, axis) in enumerate(j.channels):
            v = row[j.first + n]
            if kind == "pos":
                t[axis] = v
                continue
            a = radians(v)
            c, s = cos(a), sin(a)
            i, k = OTHER_AXES[axis]
            for base in (0, 3, 6):
                x, y = r[base + i], r[base + k]
                r[base + i] = c * x + s * y
                r[base + k] = c * y - s * x
        if j.parent is not None:
            pr, pt = out[j.parent]
            t = [
                pr[0] * t[0] + pr[1] * t[1] + pr[2] * t[2] + pt[0],
                pr[3] * t[0] + pr[4] * t[1] + pr[5] * t[2] + pt[1],
                pr[6] * t[0] + pr[7] * t[1] + pr[8] * t[2] + pt[2],
            ]
            r = mul(pr, r)
        out.append((tuple(r), t))
    return out


# An axis scaled below this (a bone scaled to nothing) places its point as
# if scaled by this much: its point stays within the shell of the joint.
MIN_SHELL_SCALE = 1e-6


def bone_error(a, b, shell):
    """Distances between two placements of a bone: the largest of its 3 shell
    points (ACL's error), and its origin's.

    The points are in real units: along local axis k, the local point that
    the first placement (the source) carries `shell` away from the joint,
    placed by both. With a rotation alone (BVH) that is `shell` along the
    axis; under a scaled armature it is `shell / |column k|`, so the shell
    is never shrunk or grown by the rig's scale."""
    (ra, ta), (rb, tb) = a, b
    dx, dy, dz = ta[0] - tb[0], ta[1] - tb[1], ta[2] - tb[2]
    worst = 0.0
    for k in range(3):
        # Column k of the linear part is the bone's local axis k, scaled.
        length = math.sqrt(ra[k] ** 2 + ra[3 + k] ** 2 + ra[6 + k] ** 2)
        reach = shell / max(length, MIN_SHELL_SCALE)
        ex = dx + reach * (ra[k] - rb[k])
        ey = dy + reach * (ra[3 + k] - rb[3 + k])
        ez = dz + reach * (ra[6 + k] - rb[6 + k])
        e = ex * ex + ey * ey + ez * ez
        if e > worst or e != e:
            worst = e
    return math.sqrt(worst), math.sqrt(dx * dx + dy * dy + dz * dz)


def summary(errors):
    """(max, p99 by nearest rank, index of the max) of a list of errors."""
    worst = max(range(len(errors)), key=lambda i: (errors[i] != errors[i], errors[i]))
    ordered = sorted(errors)
    p99 = ordered[min(len(ordered), max(1, math.ceil(0.99 * len(ordered)))) - 1]
    return errors[worst], p99, worst


def keyed(joints):
    """Name with occurrence number -> joint index."""
    seen, keys = {}, {}
    for i, j in enumerate(joints):
        n = seen.get(j.name, 0)
        seen[j.name] = n + 1
        keys[(j.name, n)] = i
    return keys


def report(args, compare, pairs, names, wrapped, looped_to, poses):
    """Measures every bone pair at every frame pair, prints the summary (JSON
    with --json) and returns the exit status: 0 within --max-cm, 1 over.
    `poses(fa, fb)` gives the two object-space poses of a frame pair."""
    shell_errors, origin_errors, places = [], [], []
    for fa, fb in compare:
        pose_a, pose_b = poses(fa, fb)
        for ia, ib in pairs:
            shell, origin = bone_error(pose_a[ia], pose_b[ib], args.shell_cm)
            shell_errors.append(shell)
            origin_errors.append(origin)
            places.append((names[ia], fa + 1))
    both = [max(s, o) if s == s and o == o else math.nan for s, o in zip(shell_errors, origin_errors)]
    gated = shell_errors if args.acl else both
    max_cm, p99_cm, at = summary(gated)
    shell_max, shell_p99, _ = summary(shell_errors)
    origin_max, origin_p99, _ = summary(origin_errors)
    ok = max_cm <= args.max_cm  # False for NaN
    bone, frame = places[at]
    if args.json:
        print(json.dumps({
            "source": args.source, "exported": args.exported, "bones": len(pairs),
            "frames": len(compare), "wrapped": wrapped,
            "points": "shell" if args.acl else "shell+origin",
            "max_cm": max_cm, "p99_cm": p99_cm, "worst_bone": bone, "worst_frame": frame,
            "shell_max_cm": shell_max, "shell_p99_cm": shell_p99,
            "origin_max_cm": origin_max, "origin_p99_cm": origin_p99,
            "threshold_cm": args.max_cm, "ok": ok,
        }))
    else:
        loop = f" (a loop: its last frame also against {looped_to})" if wrapped else ""
        points = "3 shell points" if args.acl else "origin and 3 shell points"
        print(f"{args.source} vs {args.exported}: {len(pairs)} bones x {len(compare)} frames{loop}\n"
              f"  3 shell points (ACL): max {shell_max:.6f} cm, p99 {shell_p99:.6f} cm; "
              f"origin: max {origin_max:.6f} cm, p99 {origin_p99:.6f} cm\n"
              f"  {points}: max {max_cm:.6f} cm (bone {bone}, frame {frame}), p99 {p99_cm:.6f} cm, "
              f"threshold {args.max_cm} cm: {'ok' if ok else 'OVER'}")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source")
    parser.add_argument("exported")
    parser.add_argument("--max-cm", type=float, default=0.01)
    parser.add_argument("--shell-cm", type=float, default=3.0)
    parser.add_argument("--acl", action="store_true",
                        help="judge by the 3 shell points alone, as ACL and the codec do")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    try:
        joints_a, (time_a, frames_a) = parse_bvh(args.source)
        joints_b, (time_b, frames_b) = parse_bvh(args.exported)
    except (BvhError, ValueError, OSError, UnicodeDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    keys_a, keys_b = keyed(joints_a), keyed(joints_b)
    if keys_a.keys() != keys_b.keys():
        only_a = sorted(k[0] for k in keys_a.keys() - keys_b.keys())
        only_b = sorted(k[0] for k in keys_b.keys() - keys_a.keys())
        print(f"error: bones differ: only in {args.source}: {only_a}; only in {args.exported}: {only_b}",
              file=sys.stderr)
        return 2
    if abs(time_a - time_b) > 1e-4:
        print(f"error: frame times differ: {time_a} s and {time_b} s", file=sys.stderr)
        return 2
    pairs = [(i, keys_b[k]) for k, i in sorted(keys_a.items(), key=lambda kv: kv[1])]
    n_a, n_b = len(frames_a), len(frames_b)
    compare = [(f, f) for f in range(min(n_a, n_b))]
    wrapped = n_b == n_a - 1
    if wrapped:
        compare.append((n_a - 1, 0))
    elif n_a != n_b:
        print(f"error: {n_a} frames in {args.source}, {n_b} in {args.exported}", file=sys.stderr)
        return 2

    names = [joint.name for joint in joints_a]
    return report(args, compare, pairs, names, wrapped, "the first exported",
                  lambda fa, fb: (object_space(joints_a, frames_a[fa]), object_space(joints_b, frames_b[fb])))


if __name__ == "__main__":
    sys.exit(main())
