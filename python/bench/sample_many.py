"""The binding's cost per pose: `Stream.sample_many(times)` over every
sample time of a file against the Rust sampler doing the same in this
process (`_rust_sample_seconds`, without Python), in alternating pairs.

    python python/bench/sample_many.py long.cine [pairs]

A pair runs A (sample_many: NumPy output, times from an array) and B (the
Rust sampler into `glam` transforms, all poses kept) back to back, in
alternating order, after a warm-up that makes every page resident; C is
the Rust sampler into one reused pose. Prints each pair, the medians, the
median of the pairs' ratios and the overhead per pose.
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

    def b():
        return _cinestream._rust_sample_seconds(stream, listed, True)

    def c():
        return _cinestream._rust_sample_seconds(stream, listed, False)

    rows = []
    for k in range(pairs):
        order = [a, b, c] if k % 2 == 0 else [c, b, a]
        got = {f.__name__: f() for f in order}
        rows.append((got["a"], got["b"], got["c"]))
        print(f"pair {k:2}: A sample_many {got['a'] * 1e3:8.2f} ms   B rust kept {got['b'] * 1e3:8.2f} ms   "
              f"C rust one pose {got['c'] * 1e3:8.2f} ms   A/B {got['a'] / got['b']:.3f}")
    n = len(times)
    med = [statistics.median(r[i] for r in rows) for i in range(3)]
    ratio = statistics.median(r[0] / r[1] for r in rows)
    ratio_c = statistics.median(r[0] / r[2] for r in rows)
    extra = statistics.median((r[0] - r[1]) / n for r in rows)
    extra_c = statistics.median((r[0] - r[2]) / n for r in rows)
    print(f"medians: A {med[0] * 1e3:.2f} ms ({med[0] / n * 1e9:.0f} ns/pose), "
          f"B {med[1] * 1e3:.2f} ms ({med[1] / n * 1e9:.0f} ns/pose), "
          f"C {med[2] * 1e3:.2f} ms ({med[2] / n * 1e9:.0f} ns/pose)")
    print(f"median of pair ratios: A/B {ratio:.3f}, A/C {ratio_c:.3f}; "
          f"overhead per pose (median of pairs): {extra * 1e9:+.0f} ns against B, {extra_c * 1e9:+.0f} ns against C")


if __name__ == "__main__":
    main()
