"""The binding's cost per pose: `Stream.sample_many(times)` over every
sample time of a file against the Rust sampler doing the same in this
process (`_rust_sample_seconds`, without Python), in alternating rounds.

    python python/bench/sample_many.py long.cine [rounds]

A round runs, back to back and in alternating order, after a warm-up that
makes every page resident:
  A  sample_many(times): times from a NumPy array, a NumPy array out;
  R  the Rust sampler filling the same float32 rows, without Python;
  T  the Rust sampler into `glam` transforms, every pose kept;
  P  the Rust sampler into one reused pose (the decode alone).
Prints each round, the medians, the median of the rounds' ratios and the
overhead per pose.
"""

import statistics
import sys
import time

import numpy as np

import cinestream
from cinestream import _cinestream


def main():
    path = sys.argv[1]
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    stream = cinestream.open(path)
    times = np.arange(stream.num_samples, dtype=np.float64) / stream.sample_rate
    listed = times.tolist()
    print(f"{path}: {stream.num_bones} bones, {len(times)} sample times, {stream.duration / 60:.1f} min")
    first = stream.sample_many(times)  # every page resident from here on
    assert first.shape == (len(times), stream.num_bones, 10)

    def a():
        start = time.perf_counter()
        stream.sample_many(times)
        return time.perf_counter() - start

    def rust(into):
        return lambda: _cinestream._rust_sample_seconds(stream, listed, into)

    runs = {"A": a, "R": rust("rows"), "T": rust("transforms"), "P": rust("pose")}
    names = list(runs)
    rows = []
    for k in range(pairs):
        order = names if k % 2 == 0 else names[::-1]
        got = {name: runs[name]() for name in order}
        rows.append(got)
        print(f"round {k:2}: " + "   ".join(f"{n} {got[n] * 1e3:7.2f} ms" for n in names)
              + f"   A/R {got['A'] / got['R']:.3f}  A/P {got['A'] / got['P']:.3f}")
    n = len(times)
    med = {name: statistics.median(r[name] for r in rows) for name in names}
    print("medians: " + ", ".join(f"{m} {med[m] * 1e3:.2f} ms ({med[m] / n * 1e9:.0f} ns/pose)" for m in names))
    for base in ("R", "T", "P"):
        ratio = statistics.median(r["A"] / r[base] for r in rows)
        extra = statistics.median((r["A"] - r[base]) / n for r in rows)
        print(f"A against {base}: median of round ratios {ratio:.3f}, overhead per pose {extra * 1e9:+.1f} ns")


if __name__ == "__main__":
    main()
