"""cinestream: skeletal animation compression and disk streaming.

Pack clips (BVH, glTF) into ``.cine`` files, compress whole folders to
measure them, open a file and sample its poses as NumPy arrays, and verify
a file against its sources::

    import cinestream
    stats = cinestream.pack("walk.bvh", "walk.cine", threshold_cm=0.01, lz4=True)
    stream = cinestream.open("walk.cine")
    pose = stream.sample(1.5)            # (bones, 10) float32
    poses = stream.sample_many(times)    # (len(times), bones, 10)
    report = stream.verify(against="walk.bvh")

Each pose row is rotation x, y, z, w, translation x, y, z (in the clip's
unit), scale x, y, z. Library errors raise :class:`CinestreamError`; the
library's warnings (a unit guessed, keys resampled, what ``lenient=True``
accepted) come through the ``warnings`` module as
:class:`CinestreamWarning`, and in the reports' ``warnings`` lists.
"""

from ._cinestream import (
    DEFAULT_PREVIEW_CM,
    CinestreamError,
    CinestreamWarning,
    Skeleton,
    Stream,
    __version__,
    batch,
    open,
    pack,
)

__all__ = [
    "DEFAULT_PREVIEW_CM",
    "CinestreamError",
    "CinestreamWarning",
    "Skeleton",
    "Stream",
    "__version__",
    "batch",
    "open",
    "pack",
]
