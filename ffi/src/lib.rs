//! The C ABI of the cinestream runtime: what a C or C++ engine links to play
//! `.cine` files.
//!
//! Two kinds of opaque handle, [`CsStream`] (an open file: its pages under a
//! memory budget, its prefetch thread) and [`CsPlayer`] (a playhead over a
//! stream: time, rate, loop mode, the pose last sampled, root motion). Every
//! function returns a [`CsStatus`]; on failure [`cs_last_error`] gives a
//! message naming the function, the argument or the library's own error,
//! for the calling thread.
//!
//! Soundness at the boundary:
//! - a handle is not an address but a number from a registry of live
//!   handles with their kind, never reused: a handle is looked up there
//!   before anything is done with it, so a freed handle (a double free
//!   too), a handle of the other kind, or any made-up value is an error,
//!   never a dereference. Handles are not sequential: each is a counter
//!   scrambled by a bijection keyed with a per-process random key, so a
//!   value guessed near a live handle names nothing;
//! - every pointer argument is checked for NULL before it is read or
//!   written, and every array comes with its length, checked against what
//!   will be written;
//! - every function runs its body under `catch_unwind`: a panic becomes
//!   [`CsStatus::Panic`] with its message, and never crosses into C.
//!
//! Handles may be used from any thread. A stream may be sampled from
//! several threads at once; a player's calls are serialized by its own
//! lock. A player keeps its stream alive: freeing the stream's handle while
//! players remain is allowed, and the stream closes with the last of them.
//!
//! The header `include/cinestream.h` is generated from this file by
//! cbindgen (see `cbindgen.toml`) and committed; a test fails when it is
//! stale.
#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(clippy::missing_safety_doc)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use cinestream::container::StreamReader;
use cinestream::format::{ClipMeta, FloatMeta};
use cinestream::play::Player;
use cinestream::sample::PoseWriter;
use cinestream::stream::{MissingPage, Stream, StreamOptions};
use cinestream::{
    sample::Quality,
    {Error, FloatKind, LoopMode, Sampling, Transform},
};

/// What every function returns: `CS_STATUS_OK`, or why it failed (with a
/// message from [`cs_last_error`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsStatus {
    /// Done.
    Ok = 0,
    /// A pointer argument was NULL.
    Null = 1,
    /// A handle that is not live: freed already, or never made by this library.
    InvalidHandle = 2,
    /// A live handle of the other kind (a player where a stream is wanted, or back).
    WrongHandleType = 3,
    /// An argument out of its range (a time that is not finite, a bone past
    /// the skeleton, an unknown policy or loop mode, invalid UTF-8).
    InvalidArgument = 4,
    /// An output array or string buffer too small for what it must hold.
    BufferTooSmall = 5,
    /// A bone remap table that is not one entry per clip bone, each -1 or a
    /// distinct index inside the output array.
    BadRemap = 6,
    /// Reading the file failed.
    Io = 7,
    /// The bytes are not a sound `.cine` file (magic, version, checksum,
    /// structure), or a page failed its checksum when loaded.
    BadFile = 8,
    /// The page the pose needs is not resident yet (policy `NOT_READY`);
    /// the prefetcher was asked for it.
    NotReady = 9,
    /// Stream options the library refuses (lookahead, tick, a budget that
    /// cannot hold two pages, the preview policy on a file without a tier).
    InvalidOptions = 10,
    /// A panic inside the library, caught at the boundary (please report).
    Panic = 11,
    /// Any other library error; the message says which.
    Other = 12,
    /// The system would not start a thread the stream needs (its prefetch
    /// thread): too many threads, or no memory for its stack. The options
    /// are fine; try again later, or open the stream with prefetch off.
    ThreadSpawn = 13,
}

/// An open `.cine` stream (opaque; made by `cs_stream_open_*`, freed by
/// [`cs_stream_free`]).
pub struct CsStream {
    _opaque: u8,
}

/// A playhead over a stream (opaque; made by [`cs_player_new`], freed by
/// [`cs_player_free`]).
pub struct CsPlayer {
    _opaque: u8,
}

/// One bone's local transform: rotation quaternion (x, y, z, w),
/// translation (x, y, z) in the clip's length unit, scale (x, y, z).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CsTransform {
    /// Unit quaternion x, y, z, w.
    pub rotation: [f32; 4],
    /// Translation x, y, z.
    pub translation: [f32; 3],
    /// Scale x, y, z.
    pub scale: [f32; 3],
}

impl From<&Transform> for CsTransform {
    fn from(t: &Transform) -> CsTransform {
        CsTransform {
            rotation: t.rotation.to_array(),
            translation: t.translation.to_array(),
            scale: t.scale.to_array(),
        }
    }
}

/// Missing-page policy: load the page and wait (a stall).
pub const CS_MISSING_PAGE_BLOCK: u32 = 0;
/// Missing-page policy: fail with `CS_STATUS_NOT_READY` and ask the
/// prefetcher for the page.
pub const CS_MISSING_PAGE_NOT_READY: u32 = 1;
/// Missing-page policy: decode from the file's preview tier while the page
/// is on its way (needs a file packed with a preview tier).
pub const CS_MISSING_PAGE_PREVIEW: u32 = 2;

/// Loop mode: times clamp to the clip's ends.
pub const CS_LOOP_CLAMP: i32 = 0;
/// Loop mode: the clip repeats.
pub const CS_LOOP_WRAP: i32 = 1;
/// Loop mode for [`CsPlayerOptions::loop_mode`]: the clip's own.
pub const CS_LOOP_CLIP: i32 = -1;

/// Quality of a pose: decoded from the clip's own keys.
pub const CS_QUALITY_FULL: u32 = 0;
/// Quality of a pose: decoded from the preview tier (within its bound).
pub const CS_QUALITY_PREVIEW: u32 = 1;

/// Float track kind: a morph target (blend shape) weight, unitless.
pub const CS_FLOAT_KIND_MORPH_WEIGHT: u32 = 0;
/// Float track kind: a camera's vertical field of view, in radians.
pub const CS_FLOAT_KIND_FIELD_OF_VIEW: u32 = 1;
/// Float track kind: anything else (a colour, a focus distance, a custom
/// curve), in the unit its importer gave it.
pub const CS_FLOAT_KIND_GENERIC: u32 = 2;

/// How a stream holds and fetches pages. Start from
/// [`cs_stream_options_default`] and change what you need.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CsStreamOptions {
    /// Most bytes of resident pages; must hold two of the file's largest pages.
    pub budget_bytes: u64,
    /// Seconds of play the prefetcher keeps resident ahead of each player, 0 to 3600.
    pub lookahead_seconds: f64,
    /// `CS_MISSING_PAGE_BLOCK`, `CS_MISSING_PAGE_NOT_READY` or `CS_MISSING_PAGE_PREVIEW`.
    pub missing_page: u32,
    /// Nonzero: run a prefetch thread.
    pub prefetch: u32,
    /// How often an active prefetcher looks at the players, in microseconds
    /// (100 to 1,000,000).
    pub tick_us: u32,
}

/// What a stream holds: its clip's shape and timing.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CsClipInfo {
    /// Bones of the skeleton: the length of a full pose.
    pub bone_count: u32,
    /// Float tracks (morph weights, fields of view, curves).
    pub float_track_count: u32,
    /// Float values of one sample, every track's components in a row.
    pub float_value_count: u32,
    /// `CS_LOOP_CLAMP` or `CS_LOOP_WRAP`.
    pub loop_mode: i32,
    /// Stored samples.
    pub sample_count: u64,
    /// Samples per second.
    pub sample_rate: f32,
    /// Nonzero when the file has a preview tier.
    pub has_preview: u32,
    /// Seconds of one loop.
    pub duration: f64,
    /// Centimetres per unit of the translations (1 for cm, 100 for m).
    pub cm_per_unit: f64,
    /// The error threshold the clip was compressed to, in cm.
    pub threshold_cm: f64,
    /// Pages of the file.
    pub page_count: u64,
}

/// One float track of a stream's clip (see [`cs_stream_float_track_info`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CsFloatTrackInfo {
    /// `CS_FLOAT_KIND_MORPH_WEIGHT`, `CS_FLOAT_KIND_FIELD_OF_VIEW` or
    /// `CS_FLOAT_KIND_GENERIC`.
    pub kind: u32,
    /// Values per sample, 1 to 4.
    pub components: u32,
    /// Index of the track's first component in the values that
    /// [`cs_stream_sample_floats`] and [`cs_player_floats`] fill; its other
    /// components follow it.
    pub offset: u32,
    /// The largest error the codec may leave in a component, in the
    /// track's unit.
    pub precision: f32,
}

/// A stream's counters since open (or [`cs_stream_reset_stats`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsStreamStats {
    /// Segment lookups that found their page resident.
    pub hits: u64,
    /// Segment lookups that did not.
    pub misses: u64,
    /// Misses that made a sampler wait for a load.
    pub stalls: u64,
    /// Total time samplers waited, in nanoseconds.
    pub stall_ns: u64,
    /// Misses answered "not ready".
    pub not_ready: u64,
    /// Sampling calls answered from the preview tier.
    pub previews: u64,
    /// Bytes read from the file.
    pub bytes_read: u64,
    /// Pages loaded, by anyone.
    pub page_loads: u64,
    /// Pages loaded by the prefetcher.
    pub prefetch_loads: u64,
    /// Pages evicted.
    pub evictions: u64,
    /// Bytes held by resident pages now.
    pub resident_bytes: u64,
    /// Most bytes resident at once.
    pub peak_resident_bytes: u64,
}

/// Bytes at the start of a `.cine` file that say how long its prefix is
/// (see [`cs_prefix_len`]).
pub const CS_HEADER_LEN: usize = 64;
const _: () = assert!(CS_HEADER_LEN == cinestream::container::HEADER_LEN);

/// A page a host-driven stream wants read: where its stored bytes are in
/// the file (see [`cs_stream_wanted_pages`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsPageRequest {
    /// The page's index, for [`cs_stream_provide_page`].
    pub page: u64,
    /// Byte offset of its stored bytes in the file.
    pub offset: u64,
    /// Length of its stored bytes.
    pub len: u64,
}

/// How a new player plays. Start from [`cs_player_options_default`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CsPlayerOptions {
    /// `CS_LOOP_CLIP` (the clip's own), `CS_LOOP_CLAMP` or `CS_LOOP_WRAP`.
    pub loop_mode: i32,
    /// Playback rate; negative plays backward.
    pub rate: f64,
    /// After preview frames, full-quality frames over which the pose eases
    /// from the preview's to the pages' (0: at once).
    pub refine_frames: u32,
}

/// What one [`cs_player_advance`] produced.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CsAdvance {
    /// Playhead after the update, in seconds, inside the clip.
    pub time: f64,
    /// Displacement of the root bone's translation since the previous ready
    /// update, across loop boundaries (zero after a seek or when not ready).
    pub root_delta: [f32; 3],
    /// Nonzero when the pose was sampled; zero when its page is not
    /// resident (policy `NOT_READY`) and the pose is the last one.
    pub ready: u32,
    /// Loop boundaries crossed: positive forward, negative backward.
    pub loops: i64,
    /// `CS_QUALITY_FULL` or `CS_QUALITY_PREVIEW`.
    pub quality: u32,
    /// The preview tier's bound in cm when `quality` is a preview, else 0.
    pub preview_bound_cm: f32,
    /// Cuts of the clip the pose crossed since the previous ready update
    /// (0 when not ready): when not 0 the picture jumped, and an engine
    /// resets motion blur and temporal anti-aliasing history.
    pub cuts: u32,
}

/// Where a player is.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CsPlayerState {
    /// Playhead in seconds.
    pub time: f64,
    /// Playback rate.
    pub rate: f64,
    /// Seconds of one loop.
    pub duration: f64,
    /// `CS_LOOP_CLAMP` or `CS_LOOP_WRAP`.
    pub loop_mode: i32,
    /// Quality of the pose last sampled: `CS_QUALITY_FULL` or `CS_QUALITY_PREVIEW`.
    pub quality: u32,
}

// ---------------------------------------------------------------------------
// Errors, the thread-local message, and the boundary guard.

/// A failure: its status and its message.
struct Fail {
    status: CsStatus,
    message: String,
}

type Outcome<T = ()> = std::result::Result<T, Fail>;

fn fail(status: CsStatus, message: impl Into<String>) -> Fail {
    Fail {
        status,
        message: message.into(),
    }
}

/// The library's error as a status and message.
fn from_error(error: Error) -> Fail {
    let status = match &error {
        Error::Io { .. } => CsStatus::Io,
        Error::Container(_) => CsStatus::BadFile,
        Error::PageNotReady { .. } => CsStatus::NotReady,
        Error::InvalidSettings { .. } => CsStatus::InvalidOptions,
        Error::ThreadSpawn { .. } => CsStatus::ThreadSpawn,
        Error::Sample(_) => CsStatus::InvalidArgument,
        _ => CsStatus::Other,
    };
    fail(status, error.to_string())
}

thread_local! {
    /// The message of the last call that failed on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // An interior NUL would cut the C string: shown as a replacement.
    let text = CString::new(message.replace('\0', "\u{fffd}")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs `body` for the C function `name`: its result as a status, its
/// failure's message (prefixed with `name`) as the thread's last error, and
/// a panic caught and reported, never unwound into the caller.
fn guard(name: &str, body: impl FnOnce() -> Outcome) -> CsStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CsStatus::Ok,
        Ok(Err(f)) => {
            set_last_error(&format!("{name}: {}", f.message));
            f.status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            set_last_error(&format!("{name}: panic inside the library: {what}"));
            CsStatus::Panic
        }
    }
}

// ---------------------------------------------------------------------------
// The handle registry.

/// What a live handle stands for.
#[derive(Clone)]
enum Object {
    Stream(Stream),
    Player(Arc<Mutex<Player>>),
}

impl Object {
    fn kind(&self) -> &'static str {
        match self {
            Object::Stream(_) => "a stream",
            Object::Player(_) => "a player",
        }
    }
}

/// Live handles by number. A handle's value is its number, never an
/// address: nothing behind a handle is ever read from the pointer itself.
/// (A B-tree rather than a hash table: its nodes are pointed to from their
/// start, so a leak checker run at exit sees them reachable.)
static REGISTRY: LazyLock<RwLock<BTreeMap<usize, Object>>> =
    LazyLock::new(|| RwLock::new(BTreeMap::new()));

/// How many handles were ever made: the counter each handle scrambles.
/// Never reset, and the scramble is a bijection, so a freed handle stays
/// invalid for the life of the process.
static HANDLES_MADE: AtomicU64 = AtomicU64::new(0);

/// Bits of a handle below its scrambled part: zero, so that a handle
/// looks like an aligned pointer to C tools.
const HANDLE_ALIGN_BITS: u32 = 3;

/// The per-process keys of the scramble: random, from the standard
/// library's randomly seeded hasher.
static HANDLE_KEYS: LazyLock<[u64; 3]> = LazyLock::new(|| {
    use std::hash::{BuildHasher as _, Hasher as _};
    let state = std::collections::hash_map::RandomState::new();
    [1u64, 2, 3].map(|i| {
        let mut hasher = state.build_hasher();
        hasher.write_u64(i);
        hasher.finish()
    })
});

/// Handle number `n` (from 1): a bijection of the handle's bits (a keyed
/// xor, two odd multiplications and xor-shifts, all modulo the width),
/// shifted to keep the alignment bits zero. Distinct `n` give distinct
/// handles; 0 (NULL) is skipped by the caller.
fn scramble(n: u64) -> usize {
    let width = usize::BITS - HANDLE_ALIGN_BITS;
    let mask = u64::MAX >> (64 - width);
    let [k0, k1, k2] = *HANDLE_KEYS;
    let mut x = (n ^ k0) & mask;
    x = x.wrapping_mul(k1 | 1) & mask;
    x ^= x >> (width / 2);
    x = x.wrapping_mul(k2 | 1) & mask;
    x ^= x >> (width / 2);
    // `x` fits in `width` bits, so the shifted value fits in usize.
    (x as usize) << HANDLE_ALIGN_BITS
}

fn registry_read() -> std::sync::RwLockReadGuard<'static, BTreeMap<usize, Object>> {
    // A panic never happens while the lock is held (inserts and removes
    // only), but a poisoned lock still holds a sound map.
    REGISTRY.read().unwrap_or_else(|e| e.into_inner())
}

fn registry_write() -> std::sync::RwLockWriteGuard<'static, BTreeMap<usize, Object>> {
    REGISTRY.write().unwrap_or_else(|e| e.into_inner())
}

fn register(object: Object) -> usize {
    let mut registry = registry_write();
    loop {
        let id = scramble(HANDLES_MADE.fetch_add(1, Ordering::Relaxed) + 1);
        // 0 is NULL; a live id cannot repeat (a bijection of a counter),
        // checked all the same.
        if id != 0 && !registry.contains_key(&id) {
            registry.insert(id, object);
            return id;
        }
    }
}

/// The live object behind `handle`, by value (a clone of its shared
/// pointer), without touching the memory `handle` might point to.
fn lookup(handle: usize, what: &str) -> Outcome<Object> {
    if handle == 0 {
        return Err(fail(CsStatus::Null, format!("{what} is NULL")));
    }
    registry_read().get(&handle).cloned().ok_or_else(|| {
        fail(
            CsStatus::InvalidHandle,
            format!("{what} {handle:#x} is not a live handle (freed already, or never made)"),
        )
    })
}

fn stream_of(handle: *const CsStream, what: &str) -> Outcome<Stream> {
    match lookup(handle as usize, what)? {
        Object::Stream(s) => Ok(s),
        other => Err(fail(
            CsStatus::WrongHandleType,
            format!("{what} is {}, not a stream", other.kind()),
        )),
    }
}

fn player_of(handle: *const CsPlayer, what: &str) -> Outcome<Arc<Mutex<Player>>> {
    match lookup(handle as usize, what)? {
        Object::Player(p) => Ok(p),
        other => Err(fail(
            CsStatus::WrongHandleType,
            format!("{what} is {}, not a player", other.kind()),
        )),
    }
}

/// A player's lock. A panic while it was held (reported as
/// `CS_STATUS_PANIC`) leaves a player that is still memory-safe to use.
fn lock(player: &Mutex<Player>) -> MutexGuard<'_, Player> {
    player.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes `handle` from the registry if it is live and of the kind
/// `is_kind` accepts; the object is dropped after the registry's lock is
/// released.
fn unregister(handle: usize, what: &str, kind: &str, is_kind: fn(&Object) -> bool) -> Outcome {
    let removed = {
        let mut registry = registry_write();
        match registry.get(&handle) {
            None if handle == 0 => return Err(fail(CsStatus::Null, format!("{what} is NULL"))),
            None => {
                return Err(fail(
                    CsStatus::InvalidHandle,
                    format!(
                        "{what} {handle:#x} is not a live handle (freed already, or never made)"
                    ),
                ))
            }
            Some(o) if !is_kind(o) => {
                return Err(fail(
                    CsStatus::WrongHandleType,
                    format!("{what} is {}, not {kind}", o.kind()),
                ))
            }
            Some(_) => registry.remove(&handle),
        }
    };
    drop(removed);
    Ok(())
}

// ---------------------------------------------------------------------------
// Checked views of the caller's pointers.

/// `out` as a writable reference, or an error naming it when NULL.
///
/// # Safety
/// A non-null `out` must point to a valid, writable, aligned `T`.
unsafe fn out_ref<'a, T>(out: *mut T, what: &str) -> Outcome<&'a mut T> {
    // SAFETY: the caller guarantees a non-null `out` is valid, writable and
    // aligned for the call's duration; NULL is refused by `as_mut`.
    unsafe { out.as_mut() }.ok_or_else(|| fail(CsStatus::Null, format!("{what} is NULL")))
}

/// `input` as a reference, or an error naming it when NULL.
///
/// # Safety
/// A non-null `input` must point to a valid, aligned `T`.
unsafe fn in_ref<'a, T>(input: *const T, what: &str) -> Outcome<&'a T> {
    // SAFETY: the caller guarantees a non-null `input` is valid and aligned;
    // NULL is refused by `as_ref`.
    unsafe { input.as_ref() }.ok_or_else(|| fail(CsStatus::Null, format!("{what} is NULL")))
}

/// Refuses a length no array of `T` can have (over `isize::MAX` bytes),
/// which a slice must not be made with: a lying length, caught before use.
fn possible_len<T>(len: usize, what: &str) -> Outcome {
    match len.checked_mul(std::mem::size_of::<T>()) {
        Some(bytes) if isize::try_from(bytes).is_ok() => Ok(()),
        _ => Err(fail(
            CsStatus::InvalidArgument,
            format!("{what} has a length of {len}, more than any array can hold"),
        )),
    }
}

/// `len` elements at `ptr` as a writable slice; NULL is an error.
///
/// # Safety
/// A non-null `ptr` must point to `len` valid, writable, aligned elements
/// not aliased elsewhere during the call.
unsafe fn out_slice<'a, T>(ptr: *mut T, len: usize, what: &str) -> Outcome<&'a mut [T]> {
    if ptr.is_null() {
        return Err(fail(CsStatus::Null, format!("{what} is NULL")));
    }
    possible_len::<T>(len, what)?;
    // SAFETY: non-null (checked above); the caller guarantees `len`
    // writable, aligned, unaliased elements at `ptr`.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// `len` elements at `ptr` as a slice; NULL is an error.
///
/// # Safety
/// A non-null `ptr` must point to `len` valid, aligned elements.
unsafe fn in_slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Outcome<&'a [T]> {
    if ptr.is_null() {
        return Err(fail(CsStatus::Null, format!("{what} is NULL")));
    }
    possible_len::<T>(len, what)?;
    // SAFETY: non-null (checked above); the caller guarantees `len` valid,
    // aligned elements at `ptr`.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A NUL-terminated UTF-8 string; NULL or invalid UTF-8 is an error.
///
/// # Safety
/// A non-null `s` must point to a NUL-terminated string.
unsafe fn in_str<'a>(s: *const c_char, what: &str) -> Outcome<&'a str> {
    if s.is_null() {
        return Err(fail(CsStatus::Null, format!("{what} is NULL")));
    }
    // SAFETY: non-null (checked above); the caller guarantees a
    // NUL-terminated string that outlives the call.
    let c = unsafe { CStr::from_ptr(s) };
    c.to_str().map_err(|e| {
        fail(
            CsStatus::InvalidArgument,
            format!("{what} is not UTF-8: {e}"),
        )
    })
}

/// The optional remap table: NULL with length 0 is none.
///
/// # Safety
/// A non-null `remap` must point to `len` valid `int32_t`.
unsafe fn remap_slice<'a>(remap: *const i32, len: usize) -> Outcome<Option<&'a [i32]>> {
    match (remap.is_null(), len) {
        (true, 0) => Ok(None),
        (true, _) => Err(fail(
            CsStatus::Null,
            format!("remap is NULL with remap_len {len} (pass NULL and 0 for no remap)"),
        )),
        // SAFETY: non-null; the caller guarantees `len` valid entries.
        (false, _) => Ok(Some(unsafe { in_slice(remap, len, "remap") }?)),
    }
}

/// Checks a remap table against the clip's bones and the output's length:
/// one entry per clip bone, each -1 (skip) or a distinct index in the output.
fn check_remap(map: Option<&[i32]>, bones: usize, out_len: usize) -> Outcome {
    let Some(map) = map else {
        if out_len < bones {
            return Err(fail(
                CsStatus::BufferTooSmall,
                format!("out holds {out_len} transforms, the clip has {bones} bones"),
            ));
        }
        return Ok(());
    };
    if map.len() != bones {
        return Err(fail(
            CsStatus::BadRemap,
            format!(
                "remap has {} entries, the clip has {bones} bones (one entry each)",
                map.len()
            ),
        ));
    }
    // Duplicates would have two clip bones write one transform. Found by
    // sorting the targets: memory follows the clip's bones, never
    // `out_len`, which only the caller vouches for.
    let mut targets = Vec::new();
    targets.try_reserve_exact(map.len()).map_err(|_| {
        fail(
            CsStatus::Other,
            format!("cannot allocate the {} entries of a remap check", map.len()),
        )
    })?;
    for (bone, &to) in map.iter().enumerate() {
        if to == -1 {
            continue;
        }
        match usize::try_from(to).ok().filter(|&i| i < out_len) {
            Some(i) => targets.push((i, bone)),
            None => {
                return Err(fail(
                    CsStatus::BadRemap,
                    format!("remap[{bone}] = {to}: neither -1 nor an index in out (0..{out_len})"),
                ))
            }
        }
    }
    targets.sort_unstable();
    if let Some(pair) = targets.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        let (i, bone) = pair[1];
        return Err(fail(
            CsStatus::BadRemap,
            format!("remap[{bone}] = {i}: another clip bone maps there too"),
        ));
    }
    Ok(())
}

/// Writes clip bone `b` to `out[b]`, or to `out[map[b]]` (skipping -1):
/// a checked map (see [`check_remap`]).
struct OutPose<'a> {
    out: &'a mut [CsTransform],
    map: Option<&'a [i32]>,
}

impl OutPose<'_> {
    #[inline(always)]
    fn slot(&mut self, bone: usize) -> Option<&mut CsTransform> {
        let index = match self.map {
            None => bone,
            Some(map) => usize::try_from(*map.get(bone)?).ok()?,
        };
        self.out.get_mut(index)
    }

    fn copy(&mut self, pose: &[Transform]) {
        for (bone, t) in pose.iter().enumerate() {
            if let Some(slot) = self.slot(bone) {
                *slot = t.into();
            }
        }
    }
}

impl PoseWriter for OutPose<'_> {
    #[inline(always)]
    fn wants(&self, bone: usize) -> bool {
        self.map
            .is_none_or(|m| m.get(bone).is_some_and(|&i| i >= 0))
    }

    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: glam::Quat) {
        if let Some(t) = self.slot(bone) {
            t.rotation = rotation.to_array();
        }
    }

    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: glam::Vec3) {
        if let Some(t) = self.slot(bone) {
            t.translation = translation.to_array();
        }
    }

    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: glam::Vec3) {
        if let Some(t) = self.slot(bone) {
            t.scale = scale.to_array();
        }
    }
}

fn finite(value: f64, what: &str) -> Outcome<f64> {
    match value.is_finite() {
        true => Ok(value),
        false => Err(fail(
            CsStatus::InvalidArgument,
            format!("{what} is {value}, not a finite number"),
        )),
    }
}

fn quality_code(q: Quality) -> (u32, f32) {
    match q {
        Quality::Full => (CS_QUALITY_FULL, 0.0),
        Quality::Preview { bound_cm, .. } => (CS_QUALITY_PREVIEW, bound_cm),
    }
}

fn float_kind_code(kind: FloatKind) -> u32 {
    match kind {
        FloatKind::MorphWeight { .. } => CS_FLOAT_KIND_MORPH_WEIGHT,
        FloatKind::FieldOfView => CS_FLOAT_KIND_FIELD_OF_VIEW,
        // `FloatKind` may grow; a kind C does not know yet is a plain curve
        // to it, which is what `GENERIC` promises (values in their own unit).
        _ => CS_FLOAT_KIND_GENERIC,
    }
}

/// Float track `track` of `meta` and the index of its first value among a
/// sample's float values, or `InvalidArgument` naming the track count.
fn float_track(meta: &ClipMeta, track: u32) -> Outcome<(&FloatMeta, u32)> {
    let index = track as usize;
    match (meta.floats.get(index), meta.float_offsets().get(index)) {
        (Some(float), Some(&offset)) => Ok((float, offset)),
        _ => Err(fail(
            CsStatus::InvalidArgument,
            format!(
                "float track {track} does not exist: the clip has {} float tracks",
                meta.floats.len()
            ),
        )),
    }
}

fn loop_code(mode: LoopMode) -> i32 {
    match mode {
        LoopMode::Clamp => CS_LOOP_CLAMP,
        LoopMode::Wrap => CS_LOOP_WRAP,
    }
}

fn loop_mode(code: i32, what: &str) -> Outcome<LoopMode> {
    match code {
        CS_LOOP_CLAMP => Ok(LoopMode::Clamp),
        CS_LOOP_WRAP => Ok(LoopMode::Wrap),
        _ => Err(fail(
            CsStatus::InvalidArgument,
            format!("{what} is {code}, not CS_LOOP_CLAMP (0) or CS_LOOP_WRAP (1)"),
        )),
    }
}

fn stream_options(o: &CsStreamOptions) -> Outcome<StreamOptions> {
    let policy = match o.missing_page {
        CS_MISSING_PAGE_BLOCK => MissingPage::Block,
        CS_MISSING_PAGE_NOT_READY => MissingPage::NotReady,
        CS_MISSING_PAGE_PREVIEW => MissingPage::Preview,
        other => {
            return Err(fail(
                CsStatus::InvalidOptions,
                format!(
                    "options->missing_page is {other}, not CS_MISSING_PAGE_BLOCK (0), \
                     _NOT_READY (1) or _PREVIEW (2)"
                ),
            ))
        }
    };
    let options = StreamOptions::default()
        .with_budget_bytes(o.budget_bytes)
        .with_lookahead_seconds(o.lookahead_seconds)
        .with_missing_page(policy)
        .with_prefetch(o.prefetch != 0)
        .with_tick(Duration::from_micros(u64::from(o.tick_us)));
    options.check().map_err(|e| {
        let f = from_error(e);
        fail(f.status, format!("options: {}", f.message))
    })?;
    Ok(options)
}

// ---------------------------------------------------------------------------
// Library-wide.

/// The library's version, a static NUL-terminated string ("0.1.0").
#[no_mangle]
pub extern "C" fn cs_version() -> *const c_char {
    // Cannot panic: a static string. Under catch_unwind all the same.
    catch_unwind(|| concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast())
        .unwrap_or(c"unknown".as_ptr())
}

/// The message of the last call that failed on this thread (empty if none
/// has), NUL-terminated. The pointer stays valid until the next failing
/// call on this thread; copy it to keep it.
#[no_mangle]
pub extern "C" fn cs_last_error() -> *const c_char {
    // Cannot panic: a thread-local read. Under catch_unwind all the same.
    catch_unwind(|| LAST_ERROR.with(|e| e.borrow().as_ptr()))
        .unwrap_or(c"panic reading the last error".as_ptr())
}

/// Copies the thread's last error message into `buf` (`capacity` bytes,
/// NUL-terminated) and sets `*length` to its length without the NUL. A
/// buffer too small gets as much as fits and `CS_STATUS_BUFFER_TOO_SMALL`
/// (the last error is kept, not replaced).
///
/// # Safety
/// `buf` must point to `capacity` writable bytes, `length` to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_last_error_copy(
    buf: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> CsStatus {
    let copy = || {
        let message = LAST_ERROR.with(|e| e.borrow().clone());
        let status = guard("cs_last_error_copy", || {
            // SAFETY: the caller's contract (see above); NULL is refused.
            let length = unsafe { out_ref(length, "length") }?;
            // SAFETY: the caller's contract (see above); NULL is refused.
            let buf = unsafe { out_slice(buf.cast::<u8>(), capacity, "buf") }?;
            write_c_string(message.as_bytes(), buf, length)
        });
        if status == CsStatus::Ok || status == CsStatus::BufferTooSmall {
            // Keep the copied message as the thread's last error.
            LAST_ERROR.with(|e| *e.borrow_mut() = message);
        }
        status
    };
    catch_unwind(copy).unwrap_or(CsStatus::Panic)
}

/// Copies `text` and a NUL into `buf`, as much as fits, and its length
/// into `length`; too small a buffer is an error after the copy.
fn write_c_string(text: &[u8], buf: &mut [u8], length: &mut usize) -> Outcome {
    *length = text.len();
    if buf.is_empty() {
        return Err(fail(
            CsStatus::BufferTooSmall,
            format!("buf has 0 bytes, {} needed", text.len() + 1),
        ));
    }
    let n = text.len().min(buf.len() - 1);
    buf[..n].copy_from_slice(&text[..n]);
    buf[n] = 0;
    if n < text.len() {
        return Err(fail(
            CsStatus::BufferTooSmall,
            format!("buf has {} bytes, {} needed", buf.len(), text.len() + 1),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Streams.

/// The default stream options: 64 MiB budget, 4 s lookahead, policy
/// `BLOCK`, a prefetch thread ticking every 5 ms.
///
/// # Safety
/// `out` must point to a writable `CsStreamOptions`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_options_default(out: *mut CsStreamOptions) -> CsStatus {
    guard("cs_stream_options_default", || {
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        let d = StreamOptions::default();
        *out = CsStreamOptions {
            budget_bytes: d.budget_bytes,
            lookahead_seconds: d.lookahead_seconds,
            missing_page: CS_MISSING_PAGE_BLOCK,
            prefetch: u32::from(d.prefetch),
            tick_us: u32::try_from(d.tick.as_micros()).unwrap_or(u32::MAX),
        };
        Ok(())
    })
}

/// Opens the `.cine` file at `path` (UTF-8, NUL-terminated): reads its
/// header and table of contents, checks them, starts the prefetcher. Pages
/// are read when needed, each checked against its checksum.
///
/// # Safety
/// `path` must be a NUL-terminated string, `options` point to a
/// `CsStreamOptions` and `out` to a writable `CsStream*`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_open_file(
    path: *const c_char,
    options: *const CsStreamOptions,
    out: *mut *mut CsStream,
) -> CsStatus {
    guard("cs_stream_open_file", || {
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let path = unsafe { in_str(path, "path") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let options = stream_options(unsafe { in_ref(options, "options") }?)?;
        let stream = Stream::open_file(Path::new(path), options).map_err(from_error)?;
        *out = register(Object::Stream(stream)) as *mut CsStream;
        Ok(())
    })
}

/// [`cs_stream_open_file`] for a file packed with its skeleton left out
/// (`pack --skeleton-by-reference`, format version 6): the skeleton is the
/// one stored in the `.cine` file at `skeleton_path` (UTF-8,
/// NUL-terminated; any clip packed with its skeleton, for instance the
/// rig's bind pose), which must be the one the file was packed with (the
/// same bones, hierarchy, names and bind pose) or the open fails in words.
///
/// # Safety
/// `path` and `skeleton_path` must be NUL-terminated strings, `options`
/// point to a `CsStreamOptions` and `out` to a writable `CsStream*`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_open_file_with_skeleton(
    path: *const c_char,
    skeleton_path: *const c_char,
    options: *const CsStreamOptions,
    out: *mut *mut CsStream,
) -> CsStatus {
    guard("cs_stream_open_file_with_skeleton", || {
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let path = unsafe { in_str(path, "path") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let skeleton_path = unsafe { in_str(skeleton_path, "skeleton_path") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let options = stream_options(unsafe { in_ref(options, "options") }?)?;
        let holder = StreamReader::open_file(Path::new(skeleton_path)).map_err(from_error)?;
        let skeleton = std::sync::Arc::clone(&holder.meta().skeleton);
        let stream = Stream::open_file(Path::new(path), options.with_skeleton(skeleton))
            .map_err(from_error)?;
        *out = register(Object::Stream(stream)) as *mut CsStream;
        Ok(())
    })
}

/// Opens a `.cine` file held in memory: `len` bytes at `bytes`, copied
/// (the caller keeps its buffer and may free it at once).
///
/// # Safety
/// `bytes` must point to `len` readable bytes, `options` to a
/// `CsStreamOptions` and `out` to a writable `CsStream*`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_open_memory(
    bytes: *const u8,
    len: usize,
    options: *const CsStreamOptions,
    out: *mut *mut CsStream,
) -> CsStatus {
    guard("cs_stream_open_memory", || {
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let bytes = unsafe { in_slice(bytes, len, "bytes") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let options = stream_options(unsafe { in_ref(options, "options") }?)?;
        let stream = Stream::from_bytes(bytes.to_vec(), options).map_err(from_error)?;
        *out = register(Object::Stream(stream)) as *mut CsStream;
        Ok(())
    })
}

/// Frees a stream handle. Players made from it keep the stream open until
/// they are freed. Freeing it again, or passing anything else, is an error.
#[no_mangle]
pub extern "C" fn cs_stream_free(stream: *mut CsStream) -> CsStatus {
    guard("cs_stream_free", || {
        unregister(stream as usize, "stream", "a stream", |o| {
            matches!(o, Object::Stream(_))
        })
    })
}

/// The clip's shape and timing.
///
/// # Safety
/// `out` must point to a writable `CsClipInfo`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_info(stream: *const CsStream, out: *mut CsClipInfo) -> CsStatus {
    guard("cs_stream_info", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        let meta = s.meta();
        *out = CsClipInfo {
            bone_count: meta.num_bones() as u32,
            float_track_count: meta.floats.len() as u32,
            float_value_count: meta.num_float_values() as u32,
            loop_mode: loop_code(meta.loop_mode),
            sample_count: meta.num_samples() as u64,
            sample_rate: meta.sample_rate,
            has_preview: u32::from(s.preview().is_some()),
            duration: meta.duration(),
            cm_per_unit: meta.unit.cm_per_unit(),
            threshold_cm: meta.threshold_cm,
            page_count: s.index().pages().len() as u64,
        };
        Ok(())
    })
}

/// The parents of the skeleton's bones into `parents` (`capacity`
/// entries, at least the bone count): the parent's index, or -1 for a
/// root. Parents come before their children.
///
/// # Safety
/// `parents` must point to `capacity` writable `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_bone_parents(
    stream: *const CsStream,
    parents: *mut i32,
    capacity: usize,
) -> CsStatus {
    guard("cs_stream_bone_parents", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let parents = unsafe { out_slice(parents, capacity, "parents") }?;
        let bones = s.meta().skeleton.bones();
        if parents.len() < bones.len() {
            return Err(fail(
                CsStatus::BufferTooSmall,
                format!(
                    "parents holds {capacity} entries, the clip has {} bones",
                    bones.len()
                ),
            ));
        }
        for (slot, bone) in parents.iter_mut().zip(bones) {
            *slot = bone.parent.map_or(-1, |p| p as i32);
        }
        Ok(())
    })
}

/// Bone `bone`'s name into `buf` (`capacity` bytes, NUL-terminated);
/// `*length` gets the name's length in bytes without the NUL, also when
/// the buffer is too small (`CS_STATUS_BUFFER_TOO_SMALL`, with as much as
/// fits), so a caller can ask again with `*length + 1` bytes.
///
/// # Safety
/// `buf` must point to `capacity` writable bytes, `length` to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_bone_name(
    stream: *const CsStream,
    bone: u32,
    buf: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> CsStatus {
    guard("cs_stream_bone_name", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let length = unsafe { out_ref(length, "length") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let buf = unsafe { out_slice(buf.cast::<u8>(), capacity, "buf") }?;
        let bones = s.meta().skeleton.bones();
        let b = bones.get(bone as usize).ok_or_else(|| {
            fail(
                CsStatus::InvalidArgument,
                format!(
                    "bone {bone} does not exist: the clip has {} bones",
                    bones.len()
                ),
            )
        })?;
        write_c_string(b.name.as_bytes(), buf, length)
    })
}

/// The index of the first bone named `name` (exact match) into `*bone`,
/// or -1 when none is.
///
/// # Safety
/// `name` must be a NUL-terminated string and `bone` point to an `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_find_bone(
    stream: *const CsStream,
    name: *const c_char,
    bone: *mut i32,
) -> CsStatus {
    guard("cs_stream_find_bone", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(bone, "bone") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let name = unsafe { in_str(name, "name") }?;
        *out = s
            .meta()
            .skeleton
            .bones()
            .iter()
            .position(|b| b.name == name)
            .map_or(-1, |i| i as i32);
        Ok(())
    })
}

/// Float track `track`'s name into `buf` (`capacity` bytes,
/// NUL-terminated); `*length` gets the name's length in bytes without the
/// NUL, also when the buffer is too small (`CS_STATUS_BUFFER_TOO_SMALL`,
/// with as much as fits), so a caller can ask again with `*length + 1`
/// bytes.
///
/// # Safety
/// `buf` must point to `capacity` writable bytes, `length` to a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_float_track_name(
    stream: *const CsStream,
    track: u32,
    buf: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> CsStatus {
    guard("cs_stream_float_track_name", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let length = unsafe { out_ref(length, "length") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let buf = unsafe { out_slice(buf.cast::<u8>(), capacity, "buf") }?;
        let (float, _) = float_track(s.meta(), track)?;
        write_c_string(float.name.as_bytes(), buf, length)
    })
}

/// Float track `track`'s kind, component count, offset among a sample's
/// float values and precision.
///
/// # Safety
/// `out` must point to a writable `CsFloatTrackInfo`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_float_track_info(
    stream: *const CsStream,
    track: u32,
    out: *mut CsFloatTrackInfo,
) -> CsStatus {
    guard("cs_stream_float_track_info", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        let (float, offset) = float_track(s.meta(), track)?;
        *out = CsFloatTrackInfo {
            kind: float_kind_code(float.kind),
            components: u32::from(float.components),
            offset,
            precision: float.precision,
        };
        Ok(())
    })
}

/// The index of the first float track named `name` (exact match) into
/// `*track`, or -1 when none is.
///
/// # Safety
/// `name` must be a NUL-terminated string and `track` point to an `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_find_float_track(
    stream: *const CsStream,
    name: *const c_char,
    track: *mut i32,
) -> CsStatus {
    guard("cs_stream_find_float_track", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(track, "track") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let name = unsafe { in_str(name, "name") }?;
        *out = s
            .meta()
            .floats
            .iter()
            .position(|f| f.name == name)
            .map_or(-1, |i| i as i32);
        Ok(())
    })
}

/// Samples every bone at `time` (seconds, clamped or wrapped by the clip's
/// loop mode) into `out` (`out_len` transforms). Without a remap
/// (`remap` NULL, `remap_len` 0) clip bone `b` goes to `out[b]` and
/// `out_len` must be at least the bone count; with one, `remap_len` must be
/// the bone count and clip bone `b` goes to `out[remap[b]]`, or nowhere
/// when `remap[b]` is -1 (its tracks are then not decoded where they
/// can be skipped); entries must be distinct indices in `out`. Transforms
/// of `out` no bone maps to are left as they were. `*quality` (may not be
/// NULL) says whether the pose came from the preview tier.
///
/// # Safety
/// `out` must point to `out_len` writable `CsTransform`, a non-null
/// `remap` to `remap_len` `int32_t`, `quality` to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_sample(
    stream: *const CsStream,
    time: f64,
    out: *mut CsTransform,
    out_len: usize,
    remap: *const i32,
    remap_len: usize,
    quality: *mut u32,
) -> CsStatus {
    guard("cs_stream_sample", || {
        let s = stream_of(stream, "stream")?;
        let time = finite(time, "time")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let quality = unsafe { out_ref(quality, "quality") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_slice(out, out_len, "out") }?;
        // SAFETY: the caller's contract (see above); NULL with a length is refused.
        let map = unsafe { remap_slice(remap, remap_len) }?;
        check_remap(map, s.meta().num_bones(), out.len())?;
        let q = s
            .sample_into(time, &mut OutPose { out, map })
            .map_err(from_error)?;
        *quality = quality_code(q).0;
        Ok(())
    })
}

/// Samples one bone at `time`, decoding only its tracks.
///
/// # Safety
/// `out` must point to a writable `CsTransform`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_sample_bone(
    stream: *const CsStream,
    bone: u32,
    time: f64,
    out: *mut CsTransform,
) -> CsStatus {
    guard("cs_stream_sample_bone", || {
        let s = stream_of(stream, "stream")?;
        let time = finite(time, "time")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        let t = s.sample_bone(bone as usize, time).map_err(from_error)?;
        *out = (&t).into();
        Ok(())
    })
}

/// Samples every float track at `time` into `values` (`capacity` floats,
/// at least `float_value_count`): track after track, each track's
/// components in a row. A clip without float tracks writes nothing.
///
/// # Safety
/// `values` must point to `capacity` writable floats.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_sample_floats(
    stream: *const CsStream,
    time: f64,
    values: *mut f32,
    capacity: usize,
) -> CsStatus {
    guard("cs_stream_sample_floats", || {
        let s = stream_of(stream, "stream")?;
        let time = finite(time, "time")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let values = unsafe { out_slice(values, capacity, "values") }?;
        let n = s.meta().num_float_values();
        let Some(values) = values.get_mut(..n) else {
            return Err(fail(
                CsStatus::BufferTooSmall,
                format!("values holds {capacity} floats, the clip has {n}"),
            ));
        };
        s.sample_floats(time, values).map_err(from_error)?;
        Ok(())
    })
}

/// Loads the pages of the pose at `time` now (blocking), whatever the policy.
#[no_mangle]
pub extern "C" fn cs_stream_preload(stream: *const CsStream, time: f64) -> CsStatus {
    guard("cs_stream_preload", || {
        let s = stream_of(stream, "stream")?;
        s.preload(finite(time, "time")?).map_err(from_error)
    })
}

/// The stream's counters: stalls, page loads, resident bytes and more.
///
/// # Safety
/// `out` must point to a writable `CsStreamStats`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_stats(
    stream: *const CsStream,
    out: *mut CsStreamStats,
) -> CsStatus {
    guard("cs_stream_stats", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        let t = s.stats();
        *out = CsStreamStats {
            hits: t.hits,
            misses: t.misses,
            stalls: t.stalls,
            stall_ns: t.stall_ns,
            not_ready: t.not_ready,
            previews: t.previews,
            bytes_read: t.bytes_read,
            page_loads: t.page_loads,
            prefetch_loads: t.prefetch_loads,
            evictions: t.evictions,
            resident_bytes: t.resident_bytes,
            peak_resident_bytes: t.peak_resident_bytes,
        };
        Ok(())
    })
}

/// Zeroes the counters (resident bytes stay what they are).
#[no_mangle]
pub extern "C" fn cs_stream_reset_stats(stream: *const CsStream) -> CsStatus {
    guard("cs_stream_reset_stats", || {
        stream_of(stream, "stream")?.reset_stats();
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Host-driven I/O: the engine reads the pages itself.

/// How many bytes from the file's start [`cs_stream_open_host`] needs (the
/// header, metadata and seek index), from the file's first
/// `CS_HEADER_LEN` bytes at `header` (`header_len` of them, at least that
/// many) and the file's length.
///
/// # Safety
/// `header` must point to `header_len` readable bytes, `prefix_len` to a
/// writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_prefix_len(
    header: *const u8,
    header_len: usize,
    file_len: u64,
    prefix_len: *mut u64,
) -> CsStatus {
    guard("cs_prefix_len", || {
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(prefix_len, "prefix_len") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let header = unsafe { in_slice(header, header_len, "header") }?;
        let parsed = cinestream::container::Header::parse(header, file_len)
            .map_err(|e| from_error(Error::Container(e)))?;
        *out = parsed.pages_offset;
        Ok(())
    })
}

/// Opens a stream whose pages the host reads itself (its own job system or
/// asset loader) instead of a prefetch thread: `prefix` holds the file's
/// first [`cs_prefix_len`] bytes (copied), `file_len` is the file's length.
/// The policy must be `NOT_READY` or `PREVIEW`; the stream then says which
/// pages it wants ([`cs_stream_wanted_pages`]) and the host hands each over
/// when read ([`cs_stream_provide_page`]).
///
/// # Safety
/// `prefix` must point to `prefix_len` readable bytes, `options` to a
/// `CsStreamOptions` and `out` to a writable `CsStream*`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_open_host(
    prefix: *const u8,
    prefix_len: usize,
    file_len: u64,
    options: *const CsStreamOptions,
    out: *mut *mut CsStream,
) -> CsStatus {
    guard("cs_stream_open_host", || {
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let prefix = unsafe { in_slice(prefix, prefix_len, "prefix") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let options = stream_options(unsafe { in_ref(options, "options") }?)?;
        let stream = Stream::open_host(prefix.to_vec(), file_len, options).map_err(from_error)?;
        *out = register(Object::Stream(stream)) as *mut CsStream;
        Ok(())
    })
}

/// The pages a host-driven stream wants read, most needed first (pages
/// not-ready samplers asked for, then those ahead of every player), at most
/// `capacity` of them into `requests`; `*count` gets how many. Resident
/// pages are left out; a stream that reads its own pages wants none.
///
/// # Safety
/// `requests` must point to `capacity` writable `CsPageRequest`, `count`
/// to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_wanted_pages(
    stream: *const CsStream,
    requests: *mut CsPageRequest,
    capacity: usize,
    count: *mut usize,
) -> CsStatus {
    guard("cs_stream_wanted_pages", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let count = unsafe { out_ref(count, "count") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let requests = unsafe { out_slice(requests, capacity, "requests") }?;
        let wanted = s.wanted_pages(capacity);
        for (slot, w) in requests.iter_mut().zip(&wanted) {
            *slot = CsPageRequest {
                page: w.page as u64,
                offset: w.offset,
                len: w.len as u64,
            };
        }
        *count = wanted.len().min(capacity);
        Ok(())
    })
}

/// Hands over the stored bytes of `page` the host read (`len` bytes at
/// `bytes`, copied; the offset and length [`cs_stream_wanted_pages`] gave).
/// They are checked like any page (length, checksum, every segment):
/// `CS_STATUS_BAD_FILE` when they are not sound. `*installed` is 0 when the
/// budget has no room for them now (a page the players need sooner holds
/// it).
///
/// # Safety
/// `bytes` must point to `len` readable bytes, `installed` to a writable
/// `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_stream_provide_page(
    stream: *const CsStream,
    page: u64,
    bytes: *const u8,
    len: usize,
    installed: *mut u32,
) -> CsStatus {
    guard("cs_stream_provide_page", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let installed = unsafe { out_ref(installed, "installed") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let bytes = unsafe { in_slice(bytes, len, "bytes") }?;
        let pages = s.index().pages().len();
        let page = usize::try_from(page)
            .ok()
            .filter(|&p| p < pages)
            .ok_or_else(|| {
                fail(
                    CsStatus::InvalidArgument,
                    format!("page {page} does not exist: the file has {pages} pages"),
                )
            })?;
        *installed = u32::from(s.provide_page(page, bytes.to_vec()).map_err(from_error)?);
        Ok(())
    })
}

// ---------------------------------------------------------------------------
// Players.

/// The default player options: the clip's loop mode, rate 1, no easing
/// after preview frames.
///
/// # Safety
/// `out` must point to a writable `CsPlayerOptions`.
#[no_mangle]
pub unsafe extern "C" fn cs_player_options_default(out: *mut CsPlayerOptions) -> CsStatus {
    guard("cs_player_options_default", || {
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        *out = CsPlayerOptions {
            loop_mode: CS_LOOP_CLIP,
            rate: 1.0,
            refine_frames: 0,
        };
        Ok(())
    })
}

/// A player over `stream` at time 0; its pose is the base pose until the
/// first seek or advance. It keeps the stream open until it is freed.
///
/// # Safety
/// `options` must point to a `CsPlayerOptions`, `out` to a writable `CsPlayer*`.
#[no_mangle]
pub unsafe extern "C" fn cs_player_new(
    stream: *const CsStream,
    options: *const CsPlayerOptions,
    out: *mut *mut CsPlayer,
) -> CsStatus {
    guard("cs_player_new", || {
        let s = stream_of(stream, "stream")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let o = unsafe { in_ref(options, "options") }?;
        let rate = finite(o.rate, "options->rate")?;
        let mut player = Player::new(&s).with_refine_frames(o.refine_frames);
        if o.loop_mode != CS_LOOP_CLIP {
            player = player.with_loop_mode(loop_mode(o.loop_mode, "options->loop_mode")?);
        }
        player.set_rate(rate);
        *out = register(Object::Player(Arc::new(Mutex::new(player)))) as *mut CsPlayer;
        Ok(())
    })
}

/// Frees a player handle. Freeing it again, or passing anything else, is
/// an error.
#[no_mangle]
pub extern "C" fn cs_player_free(player: *mut CsPlayer) -> CsStatus {
    guard("cs_player_free", || {
        unregister(player as usize, "player", "a player", |o| {
            matches!(o, Object::Player(_))
        })
    })
}

/// Sets the playback rate (negative plays backward).
#[no_mangle]
pub extern "C" fn cs_player_set_rate(player: *mut CsPlayer, rate: f64) -> CsStatus {
    guard("cs_player_set_rate", || {
        let p = player_of(player, "player")?;
        let rate = finite(rate, "rate")?;
        lock(&p).set_rate(rate);
        Ok(())
    })
}

/// Sets the loop mode (`CS_LOOP_CLAMP` or `CS_LOOP_WRAP`), whatever the
/// clip's own.
#[no_mangle]
pub extern "C" fn cs_player_set_loop_mode(player: *mut CsPlayer, mode: i32) -> CsStatus {
    guard("cs_player_set_loop_mode", || {
        let p = player_of(player, "player")?;
        let mode = loop_mode(mode, "mode")?;
        let mut guard = lock(&p);
        // `with_loop_mode` takes the player by value: swap a placeholder
        // over the same stream in and out (it never samples).
        let placeholder = Player::new(guard.stream());
        let current = std::mem::replace(&mut *guard, placeholder);
        *guard = current.with_loop_mode(mode);
        Ok(())
    })
}

/// Moves the playhead to `time` (wrapped or clamped) and samples there;
/// `*ready` is 0 when the page is not resident yet (policy `NOT_READY`),
/// the pose staying the last one. The next root delta counts from here.
///
/// # Safety
/// `ready` must point to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_player_seek(
    player: *mut CsPlayer,
    time: f64,
    ready: *mut u32,
) -> CsStatus {
    guard("cs_player_seek", || {
        let p = player_of(player, "player")?;
        let time = finite(time, "time")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let ready = unsafe { out_ref(ready, "ready") }?;
        *ready = u32::from(lock(&p).seek(time).map_err(from_error)?);
        Ok(())
    })
}

/// Moves the playhead by `dt * rate`, samples, and reports the root's
/// displacement since the previous ready update, across loop boundaries.
///
/// # Safety
/// `out` must point to a writable `CsAdvance`.
#[no_mangle]
pub unsafe extern "C" fn cs_player_advance(
    player: *mut CsPlayer,
    dt: f64,
    out: *mut CsAdvance,
) -> CsStatus {
    guard("cs_player_advance", || {
        let p = player_of(player, "player")?;
        let dt = finite(dt, "dt")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        let a = lock(&p).advance(dt).map_err(from_error)?;
        let (quality, bound) = quality_code(a.quality);
        *out = CsAdvance {
            time: a.time,
            root_delta: a.root_delta.to_array(),
            ready: u32::from(a.ready),
            loops: a.loops,
            quality,
            preview_bound_cm: bound,
            cuts: a.cuts,
        };
        Ok(())
    })
}

/// The pose last sampled into `out`, with the optional remap of
/// [`cs_stream_sample`].
///
/// # Safety
/// `out` must point to `out_len` writable `CsTransform`, a non-null
/// `remap` to `remap_len` `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn cs_player_pose(
    player: *const CsPlayer,
    out: *mut CsTransform,
    out_len: usize,
    remap: *const i32,
    remap_len: usize,
) -> CsStatus {
    guard("cs_player_pose", || {
        let p = player_of(player, "player")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_slice(out, out_len, "out") }?;
        // SAFETY: the caller's contract (see above); NULL with a length is refused.
        let map = unsafe { remap_slice(remap, remap_len) }?;
        let player = lock(&p);
        check_remap(map, player.pose().len(), out.len())?;
        OutPose { out, map }.copy(player.pose());
        Ok(())
    })
}

/// The float values sampled with the last pose into `values` (`capacity`
/// floats, at least the clip's `float_value_count`).
///
/// # Safety
/// `values` must point to `capacity` writable floats.
#[no_mangle]
pub unsafe extern "C" fn cs_player_floats(
    player: *const CsPlayer,
    values: *mut f32,
    capacity: usize,
) -> CsStatus {
    guard("cs_player_floats", || {
        let p = player_of(player, "player")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let values = unsafe { out_slice(values, capacity, "values") }?;
        let player = lock(&p);
        let floats = player.floats();
        let Some(values) = values.get_mut(..floats.len()) else {
            return Err(fail(
                CsStatus::BufferTooSmall,
                format!(
                    "values holds {capacity} floats, the clip has {}",
                    floats.len()
                ),
            ));
        };
        values.copy_from_slice(floats);
        Ok(())
    })
}

/// Where the player is: time, rate, duration, loop mode, quality.
///
/// # Safety
/// `out` must point to a writable `CsPlayerState`.
#[no_mangle]
pub unsafe extern "C" fn cs_player_state(
    player: *const CsPlayer,
    out: *mut CsPlayerState,
) -> CsStatus {
    guard("cs_player_state", || {
        let p = player_of(player, "player")?;
        // SAFETY: the caller's contract (see above); NULL is refused.
        let out = unsafe { out_ref(out, "out") }?;
        let player = lock(&p);
        *out = CsPlayerState {
            time: player.time(),
            rate: player.rate(),
            duration: player.duration(),
            loop_mode: loop_code(player.loop_mode()),
            quality: quality_code(player.quality()).0,
        };
        Ok(())
    })
}

/// How many handles are live now (streams and players): for leak checks
/// in a host's tests.
#[no_mangle]
pub extern "C" fn cs_live_handles() -> usize {
    catch_unwind(|| registry_read().len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message() -> String {
        LAST_ERROR.with(|e| e.borrow().to_string_lossy().into_owned())
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard("cs_example", || panic!("boom {}", 42));
        assert_eq!(status, CsStatus::Panic);
        assert_eq!(message(), "cs_example: panic inside the library: boom 42");
        let status = guard("cs_other", || std::panic::panic_any(7u8));
        assert_eq!(status, CsStatus::Panic);
        assert_eq!(
            message(),
            "cs_other: panic inside the library: unknown panic"
        );
    }

    #[test]
    fn a_message_with_a_nul_stays_whole() {
        let status = guard("cs_example", || Err(fail(CsStatus::Other, "a\0b")));
        assert_eq!(status, CsStatus::Other);
        assert_eq!(message(), "cs_example: a\u{fffd}b");
    }
}
