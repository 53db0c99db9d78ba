"""The Python package against the command-line program: a clip written
here (BVH text), packed, sampled, and compared with what `cinestream
export` writes of the same file; the statistics dicts with the program's
`--json` output; errors on bad input.

The program is found at $CINESTREAM_CLI, else target/release/cinestream
of this repository (`cargo build --release --bin cinestream`).
"""

import json
import math
import os
import pathlib
import subprocess
import threading
import time

import numpy as np
import pytest

import cinestream

REPO = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("CINESTREAM_CLI", str(REPO / "target" / "release" / "cinestream"))

JOINTS = [  # name, parent, offset (cm)
    ("Hips", None, (0.0, 0.0, 0.0)),
    ("Spine", "Hips", (0.0, 10.0, 0.0)),
    ("Head", "Spine", (0.0, 25.0, 0.0)),
    ("LeftArm", "Spine", (15.0, 20.0, 0.0)),
    ("LeftHand", "LeftArm", (25.0, 0.0, 0.0)),
    ("RightLeg", "Hips", (-9.0, -5.0, 0.0)),
]


def write_bvh(path, frames=48, phase=0.0, rate=30.0, joints=JOINTS):
    """A small walk-like BVH: root position and rotation, three rotations
    per joint, smooth curves, `frames` frames at `rate` Hz."""
    children = {}
    for name, parent, _ in joints:
        children.setdefault(parent, []).append(name)
    offsets = {name: off for name, _, off in joints}
    lines = ["HIERARCHY"]

    def joint(name, depth):
        pad = "  " * depth
        kind = "ROOT" if depth == 0 else "JOINT"
        lines.append(f"{pad}{kind} {name}")
        lines.append(f"{pad}{{")
        x, y, z = offsets[name]
        lines.append(f"{pad}  OFFSET {x:.4f} {y:.4f} {z:.4f}")
        if depth == 0:
            lines.append(f"{pad}  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation")
        else:
            lines.append(f"{pad}  CHANNELS 3 Zrotation Xrotation Yrotation")
        kids = children.get(name, [])
        for kid in kids:
            joint(kid, depth + 1)
        if not kids:
            lines.append(f"{pad}  End Site")
            lines.append(f"{pad}  {{")
            lines.append(f"{pad}    OFFSET 0.0000 5.0000 0.0000")
            lines.append(f"{pad}  }}")
        lines.append(f"{pad}}}")

    joint("Hips", 0)
    lines.append("MOTION")
    lines.append(f"Frames: {frames}")
    lines.append(f"Frame Time: {1.0 / rate:.6f}")
    for f in range(frames):
        t = f / rate + phase
        values = [30.0 * t, 90.0 + 2.0 * math.sin(6.0 * t), 5.0 * math.sin(t)]
        values += [3.0 * math.sin(2.0 * t), 4.0 * math.cos(3.0 * t), 20.0 * t]
        for i, _ in enumerate(joints[1:]):
            a = 1.0 + i
            values += [25.0 * math.sin(a * t), 10.0 * math.cos(0.7 * a * t), 5.0 * math.sin(1.3 * t + a)]
        lines.append(" ".join(f"{v:.5f}" for v in values))
    pathlib.Path(path).write_text("\n".join(lines) + "\n")
    return path


def cli(*args):
    if not os.path.exists(CLI):
        pytest.fail(f"the command-line program is needed at {CLI} (cargo build --release --bin cinestream)")
    run = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    d = tmp_path_factory.mktemp("clip")
    bvh = write_bvh(d / "walk.bvh")
    cine = d / "walk.cine"
    stats = cinestream.pack(bvh, cine, lz4=True)
    return bvh, cine, stats


def test_pack_returns_what_the_cli_prints(clip, tmp_path):
    bvh, cine, stats = clip
    expected = json.loads(cli("pack", bvh, "-o", tmp_path / "walk.cine", "--lz4", "--json"))
    assert set(stats) == set(expected)
    for key in expected:
        if key in ("seconds", "output"):
            continue
        assert stats[key] == expected[key], key
    assert stats["bones"] == len(JOINTS) and stats["samples"] == 48
    assert stats["max_error_cm"] <= 0.01
    assert (tmp_path / "walk.cine").read_bytes() == cine.read_bytes(), "same bytes as the program's"


def test_open_skeleton_and_timing(clip):
    _, cine, _ = clip
    s = cinestream.open(cine)
    assert s.skeleton.names == [name for name, _, _ in JOINTS]
    names = s.skeleton.names
    assert s.skeleton.parents == [-1 if p is None else names.index(p) for _, p, _ in JOINTS]
    assert len(s.skeleton) == s.num_bones == len(JOINTS)
    assert s.skeleton.index("Head") == 2
    with pytest.raises(KeyError):
        s.skeleton.index("Tail")
    assert s.num_samples == 48 and s.sample_rate == 30.0
    assert s.duration == pytest.approx(47 / 30)
    assert s.loop_mode in ("clamp", "wrap") and s.unit == "cm"
    assert "Stream" in repr(s)


def test_poses_equal_the_cli_json_export(clip, tmp_path):
    _, cine, _ = clip
    out = tmp_path / "walk.json"
    cli("export", cine, "-o", out)
    exported = json.loads(out.read_text())
    s = cinestream.open(cine)
    rate = exported["sample_rate"]
    assert [b["name"] for b in exported["bones"]] == s.skeleton.names
    times = np.arange(len(exported["samples"])) / rate
    many = s.sample_many(times)
    assert many.shape == (len(times), s.num_bones, 10) and many.dtype == np.float32
    for i, sample in enumerate(exported["samples"]):
        want = np.array(
            [b["rotation"] + b["translation"] + b["scale"] for b in sample], dtype=np.float32
        )
        pose = s.sample(times[i])
        assert pose.shape == (s.num_bones, 10) and pose.dtype == np.float32
        # The export writes each decoded f32 exactly: equal within one ulp of
        # interpolation at a key's own time.
        np.testing.assert_allclose(pose, want, rtol=0, atol=2e-6, err_msg=f"sample {i}")
        assert np.array_equal(pose, many[i]), "sample and sample_many agree bit for bit"


def test_sample_many_takes_lists_and_arrays_and_threads(clip):
    _, cine, _ = clip
    s = cinestream.open(cine)
    times = [0.0, 0.1, 0.5, 1.0, 100.0, -3.0]
    a = s.sample_many(times)
    b = s.sample_many(np.array(times))
    c = s.sample_many(np.array(times, dtype=np.float32).astype(np.float64)[::1])
    assert np.array_equal(a, b) and np.array_equal(a, c)
    assert np.array_equal(a[4], s.sample(s.duration)), "times past the end clamp"
    assert s.sample_many([]).shape == (0, s.num_bones, 10)
    # Rotations are unit quaternions.
    assert np.allclose(np.linalg.norm(a[:, :, :4], axis=2), 1.0, atol=1e-5)
    # Several threads at once (the GIL is released while sampling).
    results = [None] * 4
    dense = np.linspace(0, s.duration, 500)

    def work(k):
        results[k] = s.sample_many(dense)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, results[0]) for r in results)
    stats = s.stats()
    assert stats["page_loads"] >= 1 and stats["resident_bytes"] > 0


def test_verify_against_the_source_matches_the_cli(clip):
    bvh, cine, _ = clip
    s = cinestream.open(cine)
    report = s.verify(against=bvh)
    expected = json.loads(cli("verify", cine, "--against", bvh, "--json"))
    for key in ("file", "ok", "pages", "corrupt_pages", "max_error_cm", "p99_error_cm",
                "threshold_cm", "source_unit", "layout"):
        assert report[key] == expected[key], key
    assert report["parts"] == expected["parts"]
    assert report["ok"] and report["max_error_cm"] <= 0.01
    sound = s.verify()
    assert sound["ok"] and sound["max_error_cm"] is None and sound["layout"] is None


def test_a_file_packed_without_its_skeleton_opens_with_it(clip, tmp_path):
    bvh, cine, _ = clip
    lean = tmp_path / "lean.cine"
    stats = cinestream.pack(bvh, lean, lz4=True, skeleton_by_reference=True)
    expected = json.loads(cli("pack", bvh, "-o", tmp_path / "cli.cine", "--lz4",
                              "--skeleton-by-reference", "--json"))
    assert stats["file_bytes"] == expected["file_bytes"] < cine.stat().st_size
    assert lean.read_bytes() == (tmp_path / "cli.cine").read_bytes()
    with pytest.raises(Exception, match="skeleton"):
        cinestream.open(lean)
    stored = cinestream.open(cine)
    for skeleton in (bvh, cine):
        s = cinestream.open(lean, skeleton=skeleton)
        assert s.skeleton.names == stored.skeleton.names
        for t in (0.0, 0.37, 1.2):
            assert np.array_equal(s.sample(t), stored.sample(t)), t
        report = s.verify(against=bvh)
        assert report["ok"] and report["max_error_cm"] <= 0.01


def test_a_screen_bound_packs_as_the_program_does_and_verifies_on_screen(tmp_path):
    shot = tmp_path / "shot.cine"
    stats = cinestream.pack("procedural:2:2", shot, screen_px=0.5, preview_cm=0)
    cli("pack", "procedural:2:2", "-o", tmp_path / "cli.cine", "--screen-px", "0.5",
        "--preview-cm", "0")
    assert shot.read_bytes() == (tmp_path / "cli.cine").read_bytes()
    assert stats["screen"]["worst_px"] <= 0.5 and stats["screen"]["worst_cm"] <= 1.0
    report = cinestream.open(shot).verify(against="procedural:2:2")
    assert report["ok"] and report["screen"]["worst_px"] <= 0.5, report
    tight = cinestream.open(shot).verify(against="procedural:2:2", screen_px=0.05)
    assert not tight["ok"]
    with pytest.raises(ValueError, match="screen_px"):
        cinestream.pack("procedural:1:1", tmp_path / "x.cine", max_cm=2.0)
    with pytest.raises(Exception, match="max_cm"):
        cinestream.pack("procedural:1:1", tmp_path / "x.cine", screen_px=0.5, max_cm=0.001)
    assert not (tmp_path / "x.cine").exists()


def test_sequence_and_actors_pack_and_verify_by_part(tmp_path):
    a = write_bvh(tmp_path / "a.bvh", frames=40)
    b = write_bvh(tmp_path / "b.bvh", frames=25, phase=0.4)
    stats = cinestream.pack([a, b], tmp_path / "take.cine", sequence=True)
    assert stats["source_clips"] == 2 and stats["samples"] == 65 and stats["clip"] == "take"
    report = cinestream.open(tmp_path / "take.cine").verify(against=[a, b], sequence=True)
    expected = json.loads(cli("verify", tmp_path / "take.cine", "--against", a, b, "--sequence", "--json"))
    assert report["layout"] == expected["layout"] == "sequence"
    assert report["parts"] == expected["parts"]
    stats = cinestream.pack(tmp_path, tmp_path / "scene.cine", actors=True, preview_cm=0)
    assert stats["bones"] == 1 + 2 * len(JOINTS) and stats["preview"] is None
    report = cinestream.open(tmp_path / "scene.cine").verify(against=tmp_path, actors=True)
    assert report["ok"] and [p["clip"] for p in report["parts"]] == ["a", "b"]


def test_batch_returns_what_the_cli_prints(tmp_path):
    write_bvh(tmp_path / "a.bvh", frames=40)
    write_bvh(tmp_path / "b.bvh", frames=30, phase=1.0)
    report = cinestream.batch(tmp_path, jobs=2)
    expected = json.loads(cli("batch", tmp_path, "--json", "--jobs", "2"))
    assert set(report) == set(expected)
    for key in expected:
        if key in ("seconds", "kib_per_s", "per_clip"):
            continue
        assert report[key] == expected[key], key
    assert len(report["per_clip"]) == 2
    for got, want in zip(report["per_clip"], expected["per_clip"]):
        assert set(got) == set(want)
        assert {k: v for k, v in got.items() if k != "seconds"} == {
            k: v for k, v in want.items() if k != "seconds"}


def test_a_unit_given_as_its_size_in_cm_is_the_clis_cm_per_unit(clip, tmp_path):
    bvh, _, _ = clip
    cinestream.pack(bvh, tmp_path / "py.cine", unit=50.0)
    cli("pack", bvh, "-o", tmp_path / "cli.cine", "--cm-per-unit", "50")
    assert (tmp_path / "py.cine").read_bytes() == (tmp_path / "cli.cine").read_bytes()
    meta = json.loads(cli("inspect", "--json", tmp_path / "py.cine"))
    assert meta["clip"]["cm_per_unit"] == 50.0
    for bad in (0, -2.0, 1e9, float("nan")):
        with pytest.raises(ValueError, match="a unit's size must be in"):
            cinestream.pack(bvh, tmp_path / "bad.cine", unit=bad)
    assert not (tmp_path / "bad.cine").exists()
    with pytest.raises(ValueError, match="unit must be a name"):
        cinestream.batch(bvh, unit=[1])


def test_errors_raise_with_the_library_message(clip, tmp_path):
    bvh, cine, _ = clip
    assert issubclass(cinestream.CinestreamError, Exception)
    with pytest.raises(cinestream.CinestreamError, match="no-such.cine"):
        cinestream.open(tmp_path / "no-such.cine")
    junk = tmp_path / "junk.cine"
    junk.write_bytes(b"this is not a cinestream file, but it is long enough to hold a header")
    with pytest.raises(cinestream.CinestreamError, match="not a cinestream file"):
        cinestream.open(junk)
    cut = tmp_path / "cut.cine"
    cut.write_bytes(cine.read_bytes()[:100])
    with pytest.raises(cinestream.CinestreamError, match="truncated|container"):
        cinestream.open(cut)
    broken = tmp_path / "broken.bvh"
    broken.write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n}\n")
    with pytest.raises(cinestream.CinestreamError, match="broken.bvh line"):
        cinestream.pack(broken, tmp_path / "broken.cine")
    assert not (tmp_path / "broken.cine").exists()
    with pytest.raises(cinestream.CinestreamError, match="threshold"):
        cinestream.pack(bvh, tmp_path / "x.cine", threshold_cm=-1.0)
    with pytest.raises(ValueError, match="unknown unit 'furlong'"):
        cinestream.pack(bvh, tmp_path / "x.cine", unit="furlong")
    with pytest.raises(ValueError, match="sequence and actors"):
        cinestream.pack(bvh, tmp_path / "x.cine", sequence=True, actors=True)
    with pytest.raises(ValueError, match="inputs must be a path"):
        cinestream.pack(42, tmp_path / "x.cine")
    with pytest.raises(ValueError, match="missing_page"):
        cinestream.open(cine, missing_page="sometimes")
    with pytest.raises(cinestream.CinestreamError, match="lookahead"):
        cinestream.open(cine, lookahead_seconds=-1.0)
    s = cinestream.open(cine)
    with pytest.raises(ValueError, match="not a finite number"):
        s.sample(float("nan"))
    with pytest.raises(ValueError, match=r"times\[1\] is inf"):
        s.sample_many([0.0, float("inf")])
    with pytest.raises(ValueError, match="sequence or 1-D array"):
        s.sample_many(["a", "b"])
    fewer = write_bvh(tmp_path / "fewer.bvh", joints=JOINTS[:3])
    with pytest.raises(cinestream.CinestreamError, match="fewer.bvh: 3 bones, the file"):
        s.verify(against=fewer)
    other = write_bvh(tmp_path / "other.bvh", frames=48, phase=2.0)
    seq = cinestream.pack([bvh, other], tmp_path / "two.cine", sequence=True)
    assert seq["source_clips"] == 2
    # The layout is told from the file, as the program tells it.
    told = cinestream.open(tmp_path / "two.cine").verify(against=[bvh, other])
    assert told["ok"] and told["layout"] == "sequence" and len(told["parts"]) == 2
    with pytest.raises(cinestream.CinestreamError, match="several clips go into a directory"):
        cinestream.pack([bvh, other], tmp_path / "y.cine")


def test_sample_many_releases_the_gil(clip):
    """Another Python thread runs while sample_many decodes: with the GIL
    held, no Python code could run between the call's start and end."""
    _, cine, _ = clip
    s = cinestream.open(cine)
    times = np.linspace(0.0, s.duration, 200_000)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        s.sample_many(times)
        span["end"] = time.perf_counter()

    ticks = []
    worker = threading.Thread(target=work)
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    start, end = span["start"], span["end"]
    assert end - start > 0.05, "long enough to tell"
    inside = [t for t in ticks if start + 0.01 < t < end - 0.01]
    assert inside, f"no Python ran during a {end - start:.3f} s sample_many"


def test_float_tracks_equal_the_cli_json_export(clip, tmp_path):
    # The repository's golden file with float tracks (morph weights, a
    # field of view), tests/data/golden/v2-floats.cine.
    cine = REPO / "tests" / "data" / "golden" / "v2-floats.cine"
    out = tmp_path / "floats.json"
    cli("export", cine, "-o", out)
    exported = json.loads(out.read_text())
    s = cinestream.open(cine)
    tracks = s.float_tracks
    assert [t["name"] for t in tracks] == [f["name"] for f in exported["floats"]]
    assert [t["components"] for t in tracks] == [f["components"] for f in exported["floats"]]
    assert [t["kind"] for t in tracks] == [f["kind"] for f in exported["floats"]]
    width = sum(t["components"] for t in tracks)
    times = np.arange(len(exported["samples"])) / exported["sample_rate"]
    many = s.sample_floats_many(times)
    assert many.shape == (len(times), width) and many.dtype == np.float32
    for i, t in enumerate(times):
        want = np.array([v for f in exported["floats"] for v in f["values"][i]], dtype=np.float32)
        got = s.sample_floats(t)
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-6, err_msg=f"sample {i}")
        assert np.array_equal(got, many[i])
    for track in tracks:
        lo = track["offset"]
        assert many[:, lo:lo + track["components"]].shape[1] == track["components"]
    # A clip without float tracks has empty rows.
    plain = cinestream.open(clip[1])
    assert plain.float_tracks == [] and plain.sample_floats(0.5).shape == (0,)
    assert plain.sample_floats_many([0.0, 1.0]).shape == (2, 0)


def cli_run(*args):
    """The program's exit status, stdout and stderr (failing runs too)."""
    if not os.path.exists(CLI):
        pytest.fail(f"the command-line program is needed at {CLI} (cargo build --release --bin cinestream)")
    run = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr


def write_metres_bvh(path):
    """A BVH whose offsets are in metres: read in cm (the default), its
    skeleton is under a centimetre tall, and the unit check warns."""
    joints = [(n, p, tuple(0.01 * v for v in off)) for n, p, off in JOINTS]
    return write_bvh(path, joints=joints)


def test_warnings_reach_python_and_every_report(tmp_path):
    import warnings

    assert issubclass(cinestream.CinestreamWarning, UserWarning)
    bvh = write_metres_bvh(tmp_path / "metres.bvh")
    with pytest.warns(cinestream.CinestreamWarning, match="metres.bvh") as caught:
        stats = cinestream.pack(bvh, tmp_path / "metres.cine")
    texts = [w["text"] for w in stats["warnings"]]
    assert texts and all("metres.bvh" in t for t in texts)
    assert [str(w.message) for w in caught if w.category is cinestream.CinestreamWarning] == texts
    # The warning points at the caller's line, not inside the package.
    assert all(w.filename == __file__ for w in caught)
    # The command-line program's --json report carries the same ones.
    _, out, err = cli_run("pack", bvh, "-o", tmp_path / "cli.cine", "--json")
    assert [w["text"] for w in json.loads(out)["warnings"]] == texts
    assert all(f"warning: {t}" in err for t in texts)
    # batch and verify carry them too.
    with pytest.warns(cinestream.CinestreamWarning):
        report = cinestream.batch(bvh)
    assert [w["text"] for w in report["warnings"]] == texts
    assert report["warnings"][0]["file"] == str(bvh)
    with pytest.warns(cinestream.CinestreamWarning):
        report = cinestream.open(tmp_path / "metres.cine").verify(against=bvh)
    assert [w["text"] for w in report["warnings"]] == texts
    _, out, _ = cli_run("verify", tmp_path / "metres.cine", "--against", bvh, "--json")
    assert [w["text"] for w in json.loads(out)["warnings"]] == texts
    # Users filter them as any warning: ignored, or made errors.
    with warnings.catch_warnings():
        warnings.simplefilter("error", cinestream.CinestreamWarning)
        with pytest.raises(cinestream.CinestreamWarning):
            cinestream.pack(bvh, tmp_path / "again.cine")
    # A clean source raises none and reports none.
    with warnings.catch_warnings():
        warnings.simplefilter("error", cinestream.CinestreamWarning)
        clean = cinestream.pack(write_bvh(tmp_path / "walk.bvh"), tmp_path / "walk.cine")
    assert clean["warnings"] == []


def test_keep_going_packs_the_rest_and_lists_the_bad_file(tmp_path):
    src = tmp_path / "takes"
    src.mkdir()
    write_bvh(src / "a.bvh", frames=40)
    write_bvh(src / "c.bvh", frames=30, phase=0.5)
    (src / "b.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition\n")
    # Without keep_going the bad file stops the pack before anything is written.
    with pytest.raises(cinestream.CinestreamError, match="b.bvh"):
        cinestream.pack(src, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    code, _, err = cli_run("pack", src, "-o", tmp_path / "cli-out")
    assert code == 1 and "b.bvh" in err and not (tmp_path / "cli-out").exists()
    # With it, the others are packed and the bad one listed with its error.
    report = cinestream.pack(src, tmp_path / "out", keep_going=True)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.cine", "c.cine"]
    assert report["files_written"] == 2 and [f["clip"] for f in report["files"]] == ["a", "c"]
    assert len(report["skipped"]) == 1
    skipped = report["skipped"][0]
    assert skipped["file"] == str(src / "b.bvh") and skipped["clip"] is None
    assert "CHANNELS" in skipped["error"]
    # The program does the same, says so on stderr, and exits 1.
    code, out, err = cli_run("pack", src, "-o", tmp_path / "cli-out", "--keep-going", "--json")
    assert code == 1
    assert sorted(p.name for p in (tmp_path / "cli-out").iterdir()) == ["a.cine", "c.cine"]
    cli_report = json.loads(out)
    assert cli_report["skipped"] == report["skipped"]
    assert f"{src / 'b.bvh'}: {skipped['error']}" in err
    for got, want in zip(report["files"], cli_report["files"]):
        assert got["file_bytes"] == want["file_bytes"] and got["max_error_cm"] == want["max_error_cm"]
    # batch: the same option, the same list.
    with pytest.raises(cinestream.CinestreamError, match="b.bvh"):
        cinestream.batch(src)
    report = cinestream.batch(src, keep_going=True)
    assert report["clips"] == 2 and report["skipped"] == cli_report["skipped"]
    code, out, _ = cli_run("batch", src, "--keep-going", "--json")
    assert code == 1 and json.loads(out)["skipped"] == report["skipped"]
    # Combined into one take, a skipped part would change it: refused.
    with pytest.raises(ValueError, match="keep_going"):
        cinestream.pack(src, tmp_path / "take.cine", sequence=True, keep_going=True)
    code, _, err = cli_run("pack", "--sequence", src, "-o", tmp_path / "take.cine", "--keep-going")
    assert code == 1 and "--keep-going" in err and not (tmp_path / "take.cine").exists()


def write_gapped_gltf(path):
    """One bone, "root", whose x jumps about at 24 Hz keys with one 0.2 s
    gap (every key on 120 Hz, none contiguous), LINEAR, metres."""
    import struct as _struct

    times = [k / 24.0 for k in range(13)] + [0.7 + k / 24.0 for k in range(25)]
    times = [_struct.unpack("<f", _struct.pack("<f", t))[0] for t in times]
    xs = [0.1 * math.sin(1.3 * k) for k in range(len(times))]
    blob = _struct.pack("<%df" % len(times), *times)
    values = _struct.pack("<%df" % (3 * len(xs)), *[c for x in xs for c in (x, 1.0, 0.0)])
    doc = {
        "asset": {"version": "2.0"},
        "nodes": [{"name": "root"}],
        "buffers": [{"byteLength": len(blob) + len(values), "uri": path.stem + ".bin"}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": len(blob)},
                        {"buffer": 0, "byteOffset": len(blob), "byteLength": len(values)}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": len(times), "type": "SCALAR",
                       "min": [times[0]], "max": [times[-1]]},
                      {"bufferView": 1, "componentType": 5126, "count": len(times), "type": "VEC3"}],
        "animations": [{"name": "reach",
                        "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
                        "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}],
    }
    path.with_suffix(".bin").write_bytes(blob + values)
    path.write_text(json.dumps(doc))


def test_verify_checks_a_gltf_source_s_own_keys_like_the_cli(tmp_path):
    source = tmp_path / "gapped.gltf"
    write_gapped_gltf(source)
    # Packed at the keys' common grid (120 Hz): within the threshold at every key.
    good = tmp_path / "good.cine"
    cinestream.pack(str(source), str(good))
    report = cinestream.open(good).verify(against=str(source))
    expected = json.loads(cli("verify", good, "--against", source, "--json"))
    for key in ("ok", "codec_error_cm", "resample_error_cm", "source_error_cm", "source_key_times"):
        assert report[key] == expected[key], key
    assert report["ok"] and report["source_error_cm"] <= 0.01 and report["source_key_times"] == 38
    # Forced to 30 Hz, the file misses the source's keys by centimetres: a
    # re-import at 30 Hz alone would have said ok.
    coarse = tmp_path / "coarse.cine"
    cinestream.pack(str(source), str(coarse), rate=30)
    report = cinestream.open(coarse).verify(against=str(source))
    assert not report["ok"]
    assert report["codec_error_cm"] <= 0.01
    assert report["resample_error_cm"] > 1.0, report["resample_error_cm"]


def test_a_sequence_seam_holds_the_first_take_until_the_second_begins(tmp_path):
    # Two takes that differ: between the last sample of the first and the
    # first of the second, nothing blends (a cut at the seam); elsewhere
    # the sampler still blends.
    a = write_bvh(tmp_path / "a.bvh", frames=40)
    b = write_bvh(tmp_path / "b.bvh", frames=25, phase=2.0)
    cinestream.pack([a, b], tmp_path / "take.cine", sequence=True)
    s = cinestream.open(tmp_path / "take.cine")
    last, first = s.sample(39 / 30.0), s.sample(40 / 30.0)
    assert not np.array_equal(last, first)
    for u in (0.01, 0.25, 0.5, 0.75, 0.99):
        assert np.array_equal(s.sample((39 + u) / 30.0), last), u
    many = s.sample_many([(39 + u) / 30.0 for u in (0.1, 0.5, 0.9)])
    assert all(np.array_equal(pose, last) for pose in many)
    # Within a take, halfway is neither neighbour.
    between = s.sample(10.5 / 30.0)
    assert not np.array_equal(between, s.sample(10 / 30.0))
    assert not np.array_equal(between, s.sample(11 / 30.0))


def test_huge_sample_many_raises_memory_error_not_abort(clip):
    # 10**9 times (a broadcast view: no memory of its own) ask for 40 GB of
    # poses a bone, more than this machine can give. Before, the allocation
    # aborted the interpreter; now it is refused before the times are copied.
    _, cine, _ = clip
    s = cinestream.open(cine)
    wanted = 10**9 * s.num_bones * 10 * 4
    if wanted < 2 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"):
        pytest.skip(f"{wanted} bytes could be allocated on this machine")
    times = np.broadcast_to(np.zeros(1), (10**9,))
    with pytest.raises(MemoryError, match=r"sample_many's poses: 1000000000 x \d+ values .* GB"):
        s.sample_many(times)
    # The stream still works.
    assert s.sample_many([0.0, 0.1]).shape == (2, s.num_bones, 10)


def test_huge_sample_floats_many_raises_memory_error():
    # The float values at 4 * 10**9 times of the golden file with float
    # tracks (9 values each: 144 GB).
    s = cinestream.open(REPO / "tests" / "data" / "golden" / "v2-floats.cine")
    n = len(s.sample_floats(0.0))
    assert n > 0
    wanted = 4 * 10**9 * n * 4
    if wanted < 2 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"):
        pytest.skip(f"{wanted} bytes could be allocated on this machine")
    times = np.broadcast_to(np.zeros(1), (4 * 10**9,))
    with pytest.raises(MemoryError, match="sample_floats_many's values: 4000000000 x"):
        s.sample_floats_many(times)
    assert s.sample_floats_many([0.0]).shape == (1, n)


def test_pack_never_writes_over_a_source(tmp_path):
    """The library's pack recipe refuses an output that is an input, as the
    program does, before anything is written: the source keeps its bytes."""
    src = write_bvh(tmp_path / "walk.bvh")
    before = src.read_bytes()
    with pytest.raises(cinestream.CinestreamError, match="is the input .*walk.bvh"):
        cinestream.pack(src, src)
    assert src.read_bytes() == before
    # A sequence of one file twice, written over that file.
    with pytest.raises(cinestream.CinestreamError, match="refusing to write over a source"):
        cinestream.pack([src, src], src, sequence=True)
    assert src.read_bytes() == before
    # Another spelling of it, and a hard link to it.
    with pytest.raises(cinestream.CinestreamError, match="is the input"):
        cinestream.pack(src, tmp_path / "." / "walk.bvh")
    os.link(src, tmp_path / "hard.bvh")
    with pytest.raises(cinestream.CinestreamError, match="is the input"):
        cinestream.pack(src, tmp_path / "hard.bvh")
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.bvh", "walk.bvh"]


def test_pack_never_replaces_a_fifo_or_a_directory(tmp_path):
    """The atomic writer refuses an output that is not a regular file: a
    FIFO stays a FIFO (as root, /dev/null would have become a file)."""
    import stat

    src = write_bvh(tmp_path / "walk.bvh")
    fifo = tmp_path / "out.cine"
    os.mkfifo(fifo)
    with pytest.raises(cinestream.CinestreamError, match="FIFO .*refusing to replace it"):
        cinestream.pack(src, fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.cine", "walk.bvh"]
