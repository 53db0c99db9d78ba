"""Type stubs of the native module (re-exported by ``cinestream``)."""

import os
import pathlib
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

_Path = Union[str, "os.PathLike[str]"]
_Paths = Union[_Path, Sequence[_Path]]

__version__: str
DEFAULT_PREVIEW_CM: float

class CinestreamError(Exception):
    """An error of the cinestream library; the message names what and where."""

class CinestreamWarning(UserWarning):
    """A warning of the cinestream library (a unit guessed, keys resampled,
    what ``lenient`` accepted), raised through the ``warnings`` module."""

class Skeleton:
    """The bones of a clip, in the order of a pose's rows."""

    @property
    def names(self) -> List[str]: ...
    @property
    def parents(self) -> List[int]:
        """Each bone's parent index, -1 for a root; parents come first."""
    def index(self, name: str) -> int:
        """The first bone named ``name``; raises KeyError when none is."""
    def __len__(self) -> int: ...

class Stream:
    """An open .cine file (see :func:`open`)."""

    @property
    def skeleton(self) -> Skeleton: ...
    @property
    def duration(self) -> float:
        """Seconds of one loop."""
    @property
    def sample_rate(self) -> float: ...
    @property
    def num_samples(self) -> int: ...
    @property
    def num_bones(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def loop_mode(self) -> Literal["clamp", "wrap"]: ...
    @property
    def unit(self) -> str:
        """Length unit of translations: 'cm', 'm', 'mm', 'in' or 'ft'."""
    @property
    def path(self) -> "pathlib.Path": ...
    def sample(self, time: float) -> npt.NDArray[np.float32]:
        """The pose at ``time`` seconds: shape (bones, 10), rows of rotation
        xyzw, translation xyz, scale xyz."""
    def sample_many(
        self, times: Union[Sequence[float], npt.NDArray[np.floating[Any]]]
    ) -> npt.NDArray[np.float32]:
        """The poses at every time, shape (len(times), bones, 10), in one
        call without the GIL."""
    @property
    def float_tracks(self) -> List[Dict[str, Any]]:
        """Each float track: name, kind ('morph_weight', 'field_of_view',
        'generic'), components, precision, offset in a row of values."""
    def sample_floats(self, time: float) -> npt.NDArray[np.float32]:
        """Every float track's values at ``time``: shape (values,)."""
    def sample_floats_many(
        self, times: Union[Sequence[float], npt.NDArray[np.floating[Any]]]
    ) -> npt.NDArray[np.float32]:
        """The float values at every time: shape (len(times), values)."""
    def stats(self) -> Dict[str, int]:
        """hits, misses, stalls, stall_ns, not_ready, previews, bytes_read,
        page_loads, prefetch_loads, evictions, resident_bytes,
        peak_resident_bytes."""
    def verify(
        self,
        against: Optional[_Paths] = None,
        *,
        sequence: bool = False,
        actors: bool = False,
        threshold_cm: Optional[float] = None,
        unit: Union[str, float] = "cm",
        rate: Optional[float] = None,
        lenient: bool = False,
        clip: Optional[int] = None,
        screen_px: Optional[float] = None,
        camera_clip: Optional[_Path] = None,
    ) -> Dict[str, Any]:
        """Checksums, and the error against the sources: the keys of
        ``cinestream verify --json`` (file, ok, pages, corrupt_pages,
        max_error_cm, p99_error_cm, threshold_cm, source_unit, layout (told
        from the file unless ``sequence`` or ``actors`` says it), parts,
        floats, float_tracks_missing, float_tracks_extra, floats_ok; against
        one glTF source also codec_error_cm,
        resample_error_cm, source_error_cm and source_key_times, its own
        curves checked at every key and sample time) and ``corrupt``, a list
        of (page, message)."""

def open(
    path: _Path,
    *,
    budget_bytes: int = 64 << 20,
    lookahead_seconds: float = 4.0,
    missing_page: Literal["block", "not_ready", "preview"] = "block",
    prefetch: bool = True,
) -> Stream:
    """Opens a .cine file for sampling."""

def pack(
    inputs: _Paths,
    output: _Path,
    *,
    threshold_cm: Optional[float] = None,
    shell_cm: float = 3.0,
    segment_samples: int = 16,
    loop: Literal["auto", "clamp", "wrap"] = "auto",
    unit: Union[str, float] = "cm",
    rate: Optional[float] = None,
    lenient: bool = False,
    lz4: bool = False,
    page_kib: int = 64,
    preview_cm: float = ...,
    sequence: bool = False,
    actors: bool = False,
    clip: Optional[int] = None,
    recursive: bool = False,
    keep_going: bool = False,
    skeleton_by_reference: bool = False,
    screen_px: Optional[float] = None,
    camera: Optional[str] = None,
    resolution: Optional[Tuple[int, int]] = None,
    max_cm: Optional[float] = None,
    camera_clip: Optional[_Path] = None,
) -> Dict[str, Any]:
    """Compresses one clip (or several combined with ``sequence`` or
    ``actors``) into ``output``, or several one file each into the
    directory ``output``; returns the keys of ``cinestream pack --json``,
    ``warnings`` included (and ``skipped`` for a directory). An output that
    is an input, a glTF input's buffer, or not a regular file raises
    before anything is written. Without ``threshold_cm``: 0.01 cm, or the
    threshold an ACL clip (``.acl.sjson``) gives. ``screen_px`` bounds the
    error on screen through the clip's camera instead (``camera``,
    ``resolution``, ``max_cm``: as ``pack --screen-px``); ``camera_clip``
    joins a glTF or FBX file's camera first. ``"procedural:ACTORS:SECONDS"``
    names the built-in cinematic."""

def batch(
    inputs: _Paths,
    *,
    threshold_cm: Optional[float] = None,
    shell_cm: float = 3.0,
    segment_samples: int = 16,
    unit: Union[str, float] = "cm",
    rate: Optional[float] = None,
    lenient: bool = False,
    recursive: bool = False,
    jobs: Optional[int] = None,
    keep_going: bool = False,
) -> Dict[str, Any]:
    """Compresses every clip on its own in memory; returns the keys of
    ``cinestream batch --json``, ``per_clip``, ``skipped`` and ``warnings``
    included. Without ``threshold_cm``: 0.01 cm, or the threshold an ACL
    clip gives."""
