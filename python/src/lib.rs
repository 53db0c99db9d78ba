//! The `cinestream` Python package's native module, `cinestream._cinestream`.
//!
//! Pipeline calls (`pack`, `batch`, `Stream.verify`) return the statistics
//! the command-line program prints with `--json`, as dicts with the same
//! keys, computed by the same library calls. `open` gives a `Stream`
//! whose `sample(t)` and `sample_many(times)` return NumPy arrays of
//! `(bones, 10)` float32 values per pose: rotation x, y, z, w, translation
//! x, y, z, scale x, y, z. Library errors raise `cinestream.CinestreamError`
//! with the library's message; the GIL is released around every call that
//! reads files, compresses or samples many poses. The warnings the library
//! raises meanwhile (those the command-line program prints) come through
//! Python's `warnings` module as `cinestream.CinestreamWarning`, and in the
//! reports' `warnings` lists.

use std::ffi::CString;
use std::path::PathBuf;
use std::time::Instant;

use cinestream::compress::{
    compress, CompressSettings, CompressStats, LoopPolicy, ScreenBound, DEFAULT_PREVIEW_CM,
};
use cinestream::container::{encode_stream, WriteOptions, WriteSummary};
use cinestream::import::{self, ImportOptions};
use cinestream::many::{self, OnError, Skipped};
use cinestream::metric::Percentiles;
use cinestream::recipes;
use cinestream::recipes::pack::SkippedReport;
use cinestream::recipes::pack::{Combine, Labels, Pack, PackRequest};
use cinestream::recipes::verify::{Layout, VerifyRequest};
use cinestream::recipes::WarningReport;
use cinestream::sample::PoseWriter;
use cinestream::stream::{MissingPage, Stream, StreamOptions};
use cinestream::warnings::{self, Warning};
use cinestream::{Clip, LengthUnit, LoopMode, Sampling};
use numpy::ndarray::{Array2, Array3};
use numpy::{PyArray1, PyArray2, PyArray3, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyMemoryError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

create_exception!(
    cinestream,
    CinestreamError,
    PyException,
    "An error of the cinestream library (a file that cannot be read or is not sound, \
     settings out of range, sources that do not fit); the message names what and where."
);

create_exception!(
    cinestream,
    CinestreamWarning,
    PyUserWarning,
    "A warning of the cinestream library, one the command-line program prints: a unit \
     guessed, keys resampled, what lenient=True accepted. Filter them with the warnings \
     module; the report of the call lists them too (its 'warnings')."
);

/// Values per bone in a sampled pose.
const VALUES: usize = 10;

fn lib_err(e: cinestream::Error) -> PyErr {
    CinestreamError::new_err(e.to_string())
}

fn value_err(message: String) -> PyErr {
    PyValueError::new_err(message)
}

/// Puts the warnings a call raised into its report (`warnings`: dicts of
/// message, file, fields, origin and text, as `--json` prints them), then
/// raises each through Python's `warnings` module as a `CinestreamWarning`
/// (which an 'error' filter turns into an exception).
fn hand_over(py: Python<'_>, report: &Bound<'_, PyDict>, warnings: &[Warning]) -> PyResult<()> {
    let reports = serde_json::to_value(WarningReport::all(warnings))
        .map_err(|e| CinestreamError::new_err(e.to_string()))?;
    let list = to_py(py, &reports)?;
    set(report, "warnings", list)?;
    let category = py.get_type::<CinestreamWarning>();
    for w in warnings {
        let text = CString::new(w.to_string().replace('\0', " "))
            .map_err(|e| CinestreamError::new_err(e.to_string()))?;
        // At the line of the Python code that made the call.
        PyErr::warn(py, &category, &text, 1)?;
    }
    Ok(())
}

/// The sources `keep_going=True` left out, as dicts of file, clip (when
/// only one animation of the file failed) and error.
fn skipped_list<'py>(py: Python<'py>, skipped: &[Skipped]) -> PyResult<Bound<'py, PyAny>> {
    let reports = serde_json::to_value(SkippedReport::all(skipped))
        .map_err(|e| CinestreamError::new_err(e.to_string()))?;
    to_py(py, &reports)
}

/// `inputs` as paths: one path (str or os.PathLike) or a sequence of them.
fn paths(inputs: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if let Ok(one) = inputs.extract::<PathBuf>() {
        return Ok(vec![one]);
    }
    inputs.extract::<Vec<PathBuf>>().map_err(|_| {
        value_err("inputs must be a path or a sequence of paths (str or os.PathLike)".into())
    })
}

/// A source unit given by name (`"cm"`, `"m"`...) or as its size in
/// centimetres (a number, as the CLI's `--cm-per-unit`).
fn unit_of(unit: &Bound<'_, PyAny>) -> PyResult<LengthUnit> {
    if let Ok(name) = unit.extract::<String>() {
        return unit_named(&name);
    }
    let cm = unit.extract::<f64>().map_err(|_| {
        value_err(format!(
            "unit must be a name ('cm', 'm'...) or a size in cm, not {unit}"
        ))
    })?;
    LengthUnit::checked_cm_per_unit(cm).map_err(|e| value_err(format!("unit: {e}")))
}

fn unit_named(name: &str) -> PyResult<LengthUnit> {
    LengthUnit::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = LengthUnit::NAMED.iter().map(|(n, _)| *n).collect();
        value_err(format!(
            "unknown unit '{name}'; expected one of {}",
            names.join(", ")
        ))
    })
}

fn loop_policy(name: &str) -> PyResult<LoopPolicy> {
    match name {
        "auto" => Ok(LoopPolicy::Auto),
        "clamp" => Ok(LoopPolicy::Clamp),
        "wrap" => Ok(LoopPolicy::Wrap),
        _ => Err(value_err(format!(
            "loop must be 'auto', 'clamp' or 'wrap', not '{name}'"
        ))),
    }
}

fn import_options(
    unit: Option<&Bound<'_, PyAny>>,
    rate: Option<f32>,
    lenient: bool,
) -> PyResult<ImportOptions> {
    if let Some(rate) = rate {
        if !(1.0..=1000.0).contains(&rate) {
            return Err(value_err(format!(
                "rate must be in [1, 1000] Hz, not {rate}"
            )));
        }
    }
    Ok(ImportOptions::default()
        .with_bvh_unit(unit.map_or(Ok(LengthUnit::CENTIMETRE), unit_of)?)
        .with_gltf_sample_rate(rate)
        .with_lenient(lenient))
}

fn set<'py>(dict: &Bound<'py, PyDict>, key: &str, value: impl IntoPyObject<'py>) -> PyResult<()> {
    dict.set_item(key, value)
}

/// A recipe's JSON report as Python values: dicts, lists, ints, floats,
/// strings, booleans and None, with the keys `--json` prints.
fn to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.into_pyobject(py)?.into_any(),
            (_, Some(i), _) => i.into_pyobject(py)?.into_any(),
            (_, _, f) => f.unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => pyo3::types::PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, item) in fields {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A recipe's report as a dict.
fn report_dict<'py>(
    py: Python<'py>,
    json: cinestream::Result<serde_json::Value>,
) -> PyResult<Bound<'py, PyDict>> {
    to_py(py, &json.map_err(lib_err)?)?
        .cast_into::<PyDict>()
        .map_err(|e| CinestreamError::new_err(format!("a report that is not a dict: {e}")))
}

/// Default settings with the threshold given, if one is: without one, the
/// default holds, or the threshold an ACL clip gives.
fn given_threshold(threshold_cm: Option<f64>) -> CompressSettings {
    match threshold_cm {
        Some(cm) => CompressSettings::default().with_threshold_cm(cm),
        None => CompressSettings::default(),
    }
}

/// Compresses clips into `.cine` files and returns the statistics
/// `cinestream pack --json` prints, as a dict with the same keys.
///
/// The library's pack recipe, the one `cinestream pack` runs: `inputs` is
/// a path or a sequence of paths (.bvh, .gltf, .glb, .acl.sjson, or directories of
/// them). One file named alone is packed into the file ``output`` (into
/// it when it is a directory; ``clip`` picks one of several animations,
/// which otherwise go one file each into the directory ``output``);
/// several are combined into that one take with ``sequence=True`` (one
/// after the other) or ``actors=True`` (side by side under a Scene root),
/// or else packed one file each into the directory ``output``, named as
/// the command-line program names them; the report then has the totals,
/// ``files`` and ``skipped``. An output that is an input (however spelt,
/// or a link to it), an external buffer a glTF input reads, or a device,
/// FIFO, socket or directory raises before anything is written. A source
/// that cannot be imported or compressed raises before anything is
/// written, or with ``keep_going=True`` (one file per clip only) is
/// skipped and listed in ``skipped`` with its error. The warnings raised
/// come as ``CinestreamWarning`` and in ``warnings``. The GIL is released
/// while it works.
///
/// ``screen_px`` bounds the error on screen instead, in pixels, through
/// the clip's camera (``camera`` names its bone; ``resolution`` is
/// ``(width, height)``, default 4K; ``max_cm`` the ceiling, default 1):
/// what ``cinestream pack --screen-px`` does, and the report's ``screen``
/// says what was measured. ``camera_clip`` joins the one camera of a glTF
/// or FBX file to each clip first. An input named
/// ``"procedural:ACTORS:SECONDS"`` is the built-in cinematic.
#[pyfunction]
#[pyo3(signature = (
    inputs, output, *, threshold_cm=None, shell_cm=3.0, segment_samples=16, r#loop="auto",
    unit=None, rate=None, lenient=false, lz4=false, page_kib=64, preview_cm=DEFAULT_PREVIEW_CM,
    sequence=false, actors=false, clip=None, recursive=false, keep_going=false,
    skeleton_by_reference=false, screen_px=None, camera=None, resolution=None, max_cm=None,
    camera_clip=None
))]
#[allow(clippy::too_many_arguments)]
fn pack<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    output: PathBuf,
    threshold_cm: Option<f64>,
    shell_cm: f64,
    segment_samples: usize,
    r#loop: &str,
    unit: Option<&Bound<'py, PyAny>>,
    rate: Option<f32>,
    lenient: bool,
    lz4: bool,
    page_kib: usize,
    preview_cm: f64,
    sequence: bool,
    actors: bool,
    clip: Option<usize>,
    recursive: bool,
    keep_going: bool,
    skeleton_by_reference: bool,
    screen_px: Option<f64>,
    camera: Option<String>,
    resolution: Option<(u32, u32)>,
    max_cm: Option<f64>,
    camera_clip: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let inputs = paths(inputs)?;
    let options = import_options(unit, rate, lenient)?;
    if sequence && actors {
        return Err(value_err("sequence and actors exclude each other".into()));
    }
    if clip.is_some() && (sequence || actors) {
        return Err(value_err(
            "clip picks one clip of one source; it excludes sequence and actors".into(),
        ));
    }
    if keep_going && (sequence || actors) {
        return Err(value_err(
            "keep_going skips bad sources when packing one file per clip; combined into one \
             take, a skipped source would change it (its length or its cast, and what verify \
             checks) without a word: fix or leave out the bad source instead"
                .into(),
        ));
    }
    if !(1..=1024 * 1024).contains(&page_kib) {
        return Err(value_err(format!(
            "page_kib must be in [1, 1048576], not {page_kib}"
        )));
    }
    let screen = ScreenBound::from_options(screen_px, camera, resolution, max_cm)
        .map_err(|e| value_err(e.to_string()))?;
    let settings = given_threshold(threshold_cm)
        .with_shell_cm(shell_cm)
        .with_segment_samples(segment_samples)
        .with_loop_policy(loop_policy(r#loop)?)
        .with_screen_bound(screen);
    // Uneven glTF keys are resampled within the codec's own bound, as the
    // program does.
    let options = options.with_resample_error(settings.threshold_cm, shell_cm);
    let write = WriteOptions::default()
        .with_page_bytes(page_kib.saturating_mul(1024))
        .with_lz4(lz4)
        .with_skeleton_by_reference(skeleton_by_reference);
    let combine = match (sequence, actors) {
        (true, _) => Combine::Sequence,
        (_, true) => Combine::Actors,
        _ => Combine::Separate,
    };
    let (packed, warnings) = py.detach(|| {
        warnings::collect(|| -> cinestream::Result<Pack> {
            let files = import::collect_inputs_with(&inputs, recursive)?.files;
            let request = PackRequest {
                settings,
                write,
                preview_cm,
                import: options,
                combine,
                clip,
                on_error: OnError::keep_going(keep_going),
                labels: Labels {
                    output: "output",
                    plot: "plot",
                    clip: "clip=",
                    cuts: "cuts",
                },
                camera_clip,
                ..PackRequest::new(inputs.clone(), files, output)
            };
            recipes::pack::pack(&request, &())
        })
    });
    let report = report_dict(py, packed.map_err(lib_err)?.report().to_json())?;
    hand_over(py, &report, &warnings)?;
    Ok(report)
}

/// An input file and its clips.
type FileClips = (import::InputFile, Vec<Clip>);

/// The input files the inputs name and each one's clips, imported in
/// parallel; with keep-going, the files that could not be imported apart.
fn import_files(
    inputs: &[PathBuf],
    recursive: bool,
    options: &ImportOptions,
    on_error: OnError,
) -> cinestream::Result<(Vec<FileClips>, Vec<Skipped>)> {
    let found = import::collect_inputs_with(inputs, recursive)?;
    let (imported, skipped) = many::import_each(&found.files, options, on_error, || ())?;
    let imported = imported
        .into_iter()
        .map(|(file, clips)| (file.clone(), clips))
        .collect();
    Ok((imported, skipped))
}

/// Compresses every clip of the inputs on its own, in memory, and returns
/// the report `cinestream batch --json` prints (totals, error percentiles
/// over every bone at every sample, the bit-rate histogram, and
/// ``per_clip``). ``jobs`` worker threads (default: every core); the GIL
/// is released while it works. A source that cannot be imported or
/// compressed raises, or with ``keep_going=True`` is skipped and listed in
/// ``skipped`` with its error. The warnings raised come as
/// ``CinestreamWarning`` and in ``warnings``.
#[pyfunction]
#[pyo3(signature = (
    inputs, *, threshold_cm=None, shell_cm=3.0, segment_samples=16, unit=None, rate=None,
    lenient=false, recursive=false, jobs=None, keep_going=false
))]
#[allow(clippy::too_many_arguments)]
fn batch<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    threshold_cm: Option<f64>,
    shell_cm: f64,
    segment_samples: usize,
    unit: Option<&Bound<'py, PyAny>>,
    rate: Option<f32>,
    lenient: bool,
    recursive: bool,
    jobs: Option<usize>,
    keep_going: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let inputs = paths(inputs)?;
    let options = import_options(unit, rate, lenient)?;
    if let Some(jobs) = jobs {
        if !(1..=1024).contains(&jobs) {
            return Err(value_err(format!("jobs must be in [1, 1024], not {jobs}")));
        }
    }
    let settings = given_threshold(threshold_cm)
        .with_shell_cm(shell_cm)
        .with_segment_samples(segment_samples);
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(jobs) = jobs {
        pool = pool.num_threads(jobs);
    }
    let pool = pool
        .build()
        .map_err(|e| CinestreamError::new_err(format!("starting worker threads: {e}")))?;
    let on_error = OnError::keep_going(keep_going);
    type Done = (CompressStats, WriteSummary, (usize, usize, usize));
    type Measured = (Vec<Clip>, Vec<Done>, Vec<Skipped>, f64);
    let (measured, warnings) = py.detach(|| {
        warnings::collect(|| -> cinestream::Result<Measured> {
            // The pool's threads raise their warnings into this collection.
            let scope = warnings::Scope::current();
            pool.install(|| {
                scope.enter(|| {
                    let (files, mut skipped) =
                        import_files(&inputs, recursive, &options, on_error)?;
                    let (clips, sources): (Vec<Clip>, Vec<PathBuf>) = files
                        .into_iter()
                        .flat_map(|(f, clips)| clips.into_iter().map(move |c| (c, f.path.clone())))
                        .unzip();
                    let start = Instant::now();
                    let order: Vec<usize> = (0..clips.len()).collect();
                    let results = many::each(
                        &order,
                        on_error,
                        |&i| sources[i].as_path(),
                        |&i| -> cinestream::Result<Done> {
                            let (compressed, mut stats) = compress(&clips[i], &settings)?;
                            let (_, file) = encode_stream(&compressed, &WriteOptions::default())?;
                            let sizes = (
                                stats.compressed_bytes,
                                compressed.float_bytes(),
                                compressed.meta().floats.len(),
                            );
                            stats.compressed_bytes = file.file_bytes;
                            Ok((stats, file, sizes))
                        },
                    )?;
                    let seconds = start.elapsed().as_secs_f64();
                    skipped.extend(results.failed.iter().map(|(i, e)| Skipped {
                        file: sources[*i].clone(),
                        clip: Some(clips[*i].name().to_string()),
                        error: e.to_string(),
                    }));
                    let kept: Vec<usize> = results.done.iter().map(|&(i, _)| i).collect();
                    let done = results.done.into_iter().map(|(_, d)| d).collect();
                    let mut clips: Vec<Option<Clip>> = clips.into_iter().map(Some).collect();
                    let clips = kept.iter().filter_map(|&i| clips[i].take()).collect();
                    Ok((clips, done, skipped, seconds))
                })
            })
        })
    });
    let (clips, results, skipped, seconds) = measured.map_err(lib_err)?;
    let total_raw: usize = results.iter().map(|r| r.0.raw_bytes).sum();
    let total_compressed: usize = results.iter().map(|r| r.0.compressed_bytes).sum();
    let payload: usize = results
        .iter()
        .map(|r| r.1.metadata_bytes + r.1.segment_bytes)
        .sum();
    let total_codec: usize = results.iter().map(|r| r.2 .0).sum();
    let total_floats: usize = results.iter().map(|r| r.2 .1).sum();
    let total_float_tracks: usize = results.iter().map(|r| r.2 .2).sum();
    let mut all_errors: Vec<f64> = results
        .iter()
        .flat_map(|r| r.0.error.errors_cm.iter().copied())
        .collect();
    let percentiles = Percentiles::of(&mut all_errors);
    let mut histogram = [0u64; cinestream::format::NUM_RATES as usize];
    for r in &results {
        for (h, v) in histogram.iter_mut().zip(r.0.rate_histogram) {
            *h += v;
        }
    }
    let mut ratios: Vec<f64> = results.iter().map(|r| r.0.ratio()).collect();
    let d = PyDict::new(py);
    set(&d, "clips", results.len())?;
    set(&d, "total_raw_bytes", total_raw)?;
    set(&d, "total_compressed_bytes", total_compressed)?;
    set(&d, "total_payload_bytes", payload)?;
    set(
        &d,
        "container_overhead_pct",
        100.0 * (total_compressed as f64 / payload as f64 - 1.0),
    )?;
    set(
        &d,
        "ratio",
        total_raw as f64 / total_compressed.max(1) as f64,
    )?;
    set(&d, "median_clip_ratio", Percentiles::of(&mut ratios).p50)?;
    set(&d, "max_error_cm", percentiles.max)?;
    set(&d, "p99_error_cm", percentiles.p99)?;
    set(&d, "p999_error_cm", percentiles.p999)?;
    set(
        &d,
        "clips_over_threshold",
        results
            .iter()
            .filter(|r| r.0.error.max_cm > r.0.error.threshold_cm)
            .count(),
    )?;
    set(&d, "threshold_cm", settings.threshold_cm)?;
    set(&d, "shell_cm", shell_cm)?;
    set(&d, "seconds", seconds)?;
    set(&d, "kib_per_s", total_raw as f64 / 1024.0 / seconds)?;
    set(&d, "threads", pool.current_num_threads())?;
    set(&d, "rate_histogram", histogram.to_vec())?;
    set(&d, "total_codec_bytes", total_codec)?;
    set(&d, "total_bone_bytes", total_codec - total_floats)?;
    set(&d, "total_float_tracks", total_float_tracks)?;
    set(&d, "total_float_bytes", total_floats)?;
    let per_clip = PyList::empty(py);
    for (clip, (s, _, (codec, floats, tracks))) in clips.iter().zip(&results) {
        let c = PyDict::new(py);
        set(&c, "clip", clip.name())?;
        set(&c, "bones", clip.num_bones())?;
        set(&c, "samples", clip.num_samples())?;
        set(&c, "sample_rate", clip.sample_rate())?;
        set(&c, "source_unit", clip.unit().to_string())?;
        set(&c, "raw_bytes", s.raw_bytes)?;
        set(&c, "compressed_bytes", s.compressed_bytes)?;
        set(&c, "ratio", s.ratio())?;
        set(&c, "max_error_cm", s.error.max_cm)?;
        set(&c, "p99_error_cm", s.error.percentiles_cm.p99)?;
        set(&c, "loop", format!("{:?}", s.loop_mode).to_lowercase())?;
        set(&c, "seconds", s.seconds)?;
        set(&c, "codec_bytes", *codec)?;
        set(&c, "bone_bytes", codec.saturating_sub(*floats))?;
        set(&c, "float_tracks", *tracks)?;
        set(&c, "float_bytes", *floats)?;
        per_clip.append(c)?;
    }
    set(&d, "per_clip", per_clip)?;
    set(&d, "skipped", skipped_list(py, &skipped)?)?;
    hand_over(py, &d, &warnings)?;
    Ok(d)
}

/// A pose written as rows of 10 float32 values per bone.
struct Rows<'a> {
    values: &'a mut [f32],
}

impl PoseWriter for Rows<'_> {
    #[inline(always)]
    fn rotation(&mut self, bone: usize, rotation: glam::Quat) {
        if let Some(row) = self.values.get_mut(bone * VALUES..bone * VALUES + 4) {
            row.copy_from_slice(&rotation.to_array());
        }
    }

    #[inline(always)]
    fn translation(&mut self, bone: usize, translation: glam::Vec3) {
        if let Some(row) = self.values.get_mut(bone * VALUES + 4..bone * VALUES + 7) {
            row.copy_from_slice(&translation.to_array());
        }
    }

    #[inline(always)]
    fn scale(&mut self, bone: usize, scale: glam::Vec3) {
        if let Some(row) = self.values.get_mut(bone * VALUES + 7..bone * VALUES + 10) {
            row.copy_from_slice(&scale.to_array());
        }
    }
}

/// The bones of a stream's clip: names and parents (-1 for a root), in
/// the order of a pose's rows.
#[pyclass(name = "Skeleton", module = "cinestream", frozen)]
struct PySkeleton {
    #[pyo3(get)]
    names: Vec<String>,
    #[pyo3(get)]
    parents: Vec<i64>,
}

#[pymethods]
impl PySkeleton {
    fn __len__(&self) -> usize {
        self.names.len()
    }

    /// The index of the first bone named ``name``; ``KeyError`` when none is.
    fn index(&self, name: &str) -> PyResult<usize> {
        self.names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_string()))
    }

    fn __repr__(&self) -> String {
        format!("<cinestream.Skeleton of {} bones>", self.names.len())
    }
}

/// `rows * per_row` copies of `value` (an output the caller sized), or a
/// `MemoryError` naming `what` and how much was asked: the size is
/// computed checked and the memory reserved fallibly, so a huge input is
/// an exception, never an abort of the interpreter.
fn filled<T: Clone>(rows: usize, per_row: usize, value: T, what: &str) -> PyResult<Vec<T>> {
    let count = rows.checked_mul(per_row);
    let bytes = count.and_then(|n| n.checked_mul(std::mem::size_of::<T>()));
    let mut values = Vec::new();
    match (count, bytes) {
        (Some(count), Some(_)) if values.try_reserve_exact(count).is_ok() => {
            values.resize(count, value);
            Ok(values)
        }
        _ => Err(PyMemoryError::new_err(format!(
            "{what}: {rows} x {per_row} values of {} bytes ({}) cannot be allocated",
            std::mem::size_of::<T>(),
            match bytes {
                Some(bytes) => format!("{:.1} GB", bytes as f64 / 1e9),
                None => "more bytes than memory can address".to_string(),
            }
        ))),
    }
}

/// Times in seconds from a 1-D float64 array or any sequence of numbers,
/// every one finite. Copied: the GIL is released while they are used, and
/// other Python threads may write to the array meanwhile.
fn times_of(times: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    let times = match times.extract::<PyReadonlyArray1<'_, f64>>() {
        Ok(array) => {
            let view = array.as_array();
            let mut copy = filled(view.len(), 1, 0.0, "copying times")?;
            copy.iter_mut().zip(view.iter()).for_each(|(c, &t)| *c = t);
            copy
        }
        Err(_) => times
            .extract::<Vec<f64>>()
            .map_err(|_| value_err("times must be a sequence or 1-D array of numbers".into()))?,
    };
    if let Some(bad) = times.iter().position(|t| !t.is_finite()) {
        return Err(value_err(format!(
            "times[{bad}] is {}, not a finite number",
            times[bad]
        )));
    }
    Ok(times)
}

/// An open `.cine` file: its pages resident under a memory budget, read
/// when needed (see ``open``).
#[pyclass(name = "Stream", module = "cinestream", frozen)]
struct PyStream {
    stream: Stream,
    path: PathBuf,
    skeleton: Py<PySkeleton>,
    /// The file the skeleton came from, for a file that leaves it out.
    skeleton_file: Option<PathBuf>,
}

fn missing_page(name: &str) -> PyResult<MissingPage> {
    match name {
        "block" => Ok(MissingPage::Block),
        "not_ready" => Ok(MissingPage::NotReady),
        "preview" => Ok(MissingPage::Preview),
        _ => Err(value_err(format!(
            "missing_page must be 'block', 'not_ready' or 'preview', not '{name}'"
        ))),
    }
}

/// Opens a `.cine` file for sampling. ``budget_bytes`` bounds the resident
/// pages, ``lookahead_seconds`` is how far the prefetch thread reads ahead
/// of players, ``missing_page`` what a sample does when its page is not
/// resident ('block': load it and wait; 'not_ready': raise; 'preview':
/// answer from the file's preview tier). ``skeleton``: for a file packed
/// with ``skeleton_by_reference``, a file that holds its skeleton (a
/// ``.cine`` that stores it, or a source).
#[pyfunction]
#[pyo3(signature = (path, *, budget_bytes=64 << 20, lookahead_seconds=4.0, missing_page="block", prefetch=true, skeleton=None))]
fn open(
    py: Python<'_>,
    path: PathBuf,
    budget_bytes: u64,
    lookahead_seconds: f64,
    missing_page: &str,
    prefetch: bool,
    skeleton: Option<PathBuf>,
) -> PyResult<PyStream> {
    let mut options = StreamOptions::default()
        .with_budget_bytes(budget_bytes)
        .with_lookahead_seconds(lookahead_seconds)
        .with_missing_page(self::missing_page(missing_page)?)
        .with_prefetch(prefetch);
    let skeleton_file = skeleton;
    if let Some(file) = &skeleton_file {
        let loaded = py
            .detach(|| recipes::load_skeleton(file))
            .map_err(lib_err)?;
        options = options.with_skeleton(loaded);
    }
    let stream = py
        .detach(|| Stream::open_file(&path, options))
        .map_err(lib_err)?;
    let bones = stream.meta().skeleton.bones();
    let skeleton = PySkeleton {
        names: bones.iter().map(|b| b.name.clone()).collect(),
        parents: bones
            .iter()
            .map(|b| b.parent.map_or(-1, |p| p as i64))
            .collect(),
    };
    Ok(PyStream {
        stream,
        path,
        skeleton: Py::new(py, skeleton)?,
        skeleton_file,
    })
}

impl PyStream {
    fn check_time(time: f64) -> PyResult<f64> {
        match time.is_finite() {
            true => Ok(time),
            false => Err(value_err(format!("time {time} is not a finite number"))),
        }
    }

    /// Samples `times` into `values`, a pose of rows after another.
    fn fill(&self, times: &[f64], values: &mut [f32]) -> cinestream::Result<()> {
        let stride = self.stream.meta().num_bones() * VALUES;
        for (&t, pose) in times.iter().zip(values.chunks_exact_mut(stride)) {
            self.stream.sample_into(t, &mut Rows { values: pose })?;
        }
        Ok(())
    }
}

#[pymethods]
impl PyStream {
    /// The skeleton: ``names`` and ``parents`` (-1 for a root).
    #[getter]
    fn skeleton(&self, py: Python<'_>) -> Py<PySkeleton> {
        self.skeleton.clone_ref(py)
    }

    /// Seconds of one loop.
    #[getter]
    fn duration(&self) -> f64 {
        self.stream.meta().duration()
    }

    /// Samples per second.
    #[getter]
    fn sample_rate(&self) -> f32 {
        self.stream.meta().sample_rate
    }

    /// Stored samples.
    #[getter]
    fn num_samples(&self) -> usize {
        self.stream.meta().num_samples()
    }

    /// Bones of a pose.
    #[getter]
    fn num_bones(&self) -> usize {
        self.stream.meta().num_bones()
    }

    /// The clip's name.
    #[getter]
    fn name(&self) -> String {
        self.stream.meta().name.clone()
    }

    /// 'clamp' or 'wrap'.
    #[getter]
    fn loop_mode(&self) -> &'static str {
        match self.stream.meta().loop_mode {
            LoopMode::Clamp => "clamp",
            LoopMode::Wrap => "wrap",
        }
    }

    /// The length unit of translations ('cm', 'm', ...).
    #[getter]
    fn unit(&self) -> String {
        self.stream.meta().unit.to_string()
    }

    /// The file this stream reads.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The local pose at ``time`` seconds (clamped or wrapped by the clip's
    /// loop mode): a float32 array of shape (bones, 10), each row rotation
    /// x, y, z, w, translation x, y, z, scale x, y, z.
    fn sample<'py>(&self, py: Python<'py>, time: f64) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let time = Self::check_time(time)?;
        let bones = self.stream.meta().num_bones();
        let mut values = vec![0f32; bones * VALUES];
        self.fill(&[time], &mut values).map_err(lib_err)?;
        let array = Array2::from_shape_vec((bones, VALUES), values)
            .map_err(|e| CinestreamError::new_err(e.to_string()))?;
        Ok(PyArray2::from_owned_array(py, array))
    }

    /// The poses at every time of ``times`` (a sequence or 1-D array of
    /// seconds) in one call, without the GIL: float32, shape
    /// (len(times), bones, 10).
    fn sample_many<'py>(
        &self,
        py: Python<'py>,
        times: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray3<f32>>> {
        let bones = self.stream.meta().num_bones();
        // The output is sized (and refused) before the times are copied.
        let mut values = filled(
            times.len().unwrap_or(0),
            bones * VALUES,
            0f32,
            "sample_many's poses",
        )?;
        let times = times_of(times)?;
        let times: &[f64] = &times;
        let n = times.len();
        if values.len() != n * bones * VALUES {
            values = filled(n, bones * VALUES, 0f32, "sample_many's poses")?;
        }
        py.detach(|| self.fill(times, &mut values))
            .map_err(lib_err)?;
        let array = Array3::from_shape_vec((n, bones, VALUES), values)
            .map_err(|e| CinestreamError::new_err(e.to_string()))?;
        Ok(PyArray3::from_owned_array(py, array))
    }

    /// The float tracks (morph weights, fields of view, curves), in order:
    /// dicts of name, kind ('morph_weight', 'field_of_view', 'generic'),
    /// components (1 to 4), precision, and offset (where its components
    /// start in a row of ``sample_floats``).
    #[getter]
    fn float_tracks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let meta = self.stream.meta();
        let list = PyList::empty(py);
        for (track, offset) in meta.floats.iter().zip(meta.float_offsets()) {
            let d = PyDict::new(py);
            set(&d, "name", &track.name)?;
            set(&d, "kind", track.kind.key())?;
            set(&d, "components", track.components)?;
            set(&d, "precision", track.precision)?;
            set(&d, "offset", *offset)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Every float track's values at ``time``: float32, shape (values,),
    /// track after track (see ``float_tracks``' offsets); empty for a clip
    /// without float tracks.
    fn sample_floats<'py>(
        &self,
        py: Python<'py>,
        time: f64,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let time = Self::check_time(time)?;
        let mut values = vec![0f32; self.stream.meta().num_float_values()];
        self.stream
            .sample_floats(time, &mut values)
            .map_err(lib_err)?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// ``sample_floats`` at every time of ``times`` in one call, without the
    /// GIL: float32, shape (len(times), values).
    fn sample_floats_many<'py>(
        &self,
        py: Python<'py>,
        times: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let n = self.stream.meta().num_float_values();
        let what = "sample_floats_many's values";
        // The output is sized (and refused) before the times are copied.
        let mut values = filled(times.len().unwrap_or(0), n, 0f32, what)?;
        let times = times_of(times)?;
        if values.len() != times.len() * n {
            values = filled(times.len(), n, 0f32, what)?;
        }
        py.detach(|| -> cinestream::Result<()> {
            if n > 0 {
                for (&t, row) in times.iter().zip(values.chunks_exact_mut(n)) {
                    self.stream.sample_floats(t, row)?;
                }
            }
            Ok(())
        })
        .map_err(lib_err)?;
        let array = Array2::from_shape_vec((times.len(), n), values)
            .map_err(|e| CinestreamError::new_err(e.to_string()))?;
        Ok(PyArray2::from_owned_array(py, array))
    }

    /// The stream's counters: stalls, page loads, resident bytes and more.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.stream.stats();
        let d = PyDict::new(py);
        set(&d, "hits", s.hits)?;
        set(&d, "misses", s.misses)?;
        set(&d, "stalls", s.stalls)?;
        set(&d, "stall_ns", s.stall_ns)?;
        set(&d, "not_ready", s.not_ready)?;
        set(&d, "previews", s.previews)?;
        set(&d, "bytes_read", s.bytes_read)?;
        set(&d, "page_loads", s.page_loads)?;
        set(&d, "prefetch_loads", s.prefetch_loads)?;
        set(&d, "evictions", s.evictions)?;
        set(&d, "resident_bytes", s.resident_bytes)?;
        set(&d, "peak_resident_bytes", s.peak_resident_bytes)?;
        Ok(d)
    }

    /// Checks every page's checksum and, given the sources it was packed
    /// from (``against``: a path or paths; for a file combined from
    /// several, the layout is told from the file, or said with
    /// ``sequence=True`` or ``actors=True``), measures the error of every
    /// bone at every sample and every float track. The library's verify
    /// recipe, the one `cinestream verify` runs; returns what
    /// ``cinestream verify --json`` prints: file, ok, pages, corrupt_pages,
    /// max_error_cm, p99_error_cm, threshold_cm, source_unit, layout,
    /// parts (each source's worst error), floats, float_tracks_missing,
    /// float_tracks_extra and floats_ok. Against one glTF source it is
    /// read at the file's rate (unless ``rate`` is given), the animation
    /// named like the file's clip is picked (``clip=`` picks by index), and
    /// its own curves are checked at every key and sample time:
    /// codec_error_cm, resample_error_cm and source_error_cm (decoded against
    /// the source's curves), source_key_times; ok needs the codec and the
    /// resampling error within the threshold. ``screen_px`` also measures
    /// the error on screen through the file's camera (by default, a file
    /// packed with a screen bound is checked against its own), and
    /// ``camera_clip`` joins the camera it was packed with to the sources.
    /// The GIL is released meanwhile.
    #[pyo3(signature = (against=None, *, sequence=false, actors=false, threshold_cm=None, unit=None, rate=None, lenient=false, clip=None, screen_px=None, camera_clip=None))]
    #[allow(clippy::too_many_arguments)]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        against: Option<&Bound<'py, PyAny>>,
        sequence: bool,
        actors: bool,
        threshold_cm: Option<f64>,
        unit: Option<&Bound<'py, PyAny>>,
        rate: Option<f32>,
        lenient: bool,
        clip: Option<usize>,
        screen_px: Option<f64>,
        camera_clip: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let sources = against.map(paths).transpose()?;
        let options = import_options(unit, rate, lenient)?;
        if sequence && actors {
            return Err(value_err("sequence and actors exclude each other".into()));
        }
        if let Some(threshold) = threshold_cm {
            if !(threshold.is_finite() && threshold > 0.0) {
                return Err(value_err(format!(
                    "threshold_cm {threshold} is not a positive number of centimetres"
                )));
            }
        }
        let request = VerifyRequest {
            layout: match (sequence, actors) {
                (true, _) => Some(Layout::Sequence),
                (_, true) => Some(Layout::Actors),
                _ => None,
            },
            clip: clip.map(|i| i.to_string()),
            threshold_cm,
            import: options,
            skeleton: self.skeleton_file.clone(),
            screen_px,
            camera_clip,
            ..VerifyRequest::new(self.path.clone())
        };
        let (verified, warnings) =
            py.detach(|| warnings::collect(|| verify_file(request, sources.as_deref())));
        let verified = verified.map_err(lib_err)?;
        let d = report_dict(py, verified.report().to_json())?;
        // (page, message) pairs, as tuples.
        let corrupt = PyList::empty(py);
        for (page, message) in &verified.corrupt {
            corrupt.append((page, message))?;
        }
        set(&d, "corrupt", corrupt)?;
        hand_over(py, &d, &warnings)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let meta = self.stream.meta();
        format!(
            "<cinestream.Stream '{}': {} bones, {} samples at {} Hz, {:.3} s>",
            self.path.display(),
            meta.num_bones(),
            meta.num_samples(),
            meta.sample_rate,
            meta.duration()
        )
    }
}

/// The verify recipe, the sources (paths or directories, as given)
/// collected first; what the program's `verify` runs.
fn verify_file(
    mut request: VerifyRequest,
    sources: Option<&[PathBuf]>,
) -> cinestream::Result<recipes::verify::Verified> {
    if let Some(sources) = sources {
        request.against = import::collect_inputs_with(sources, false)?
            .files
            .into_iter()
            .map(|f| f.path)
            .collect();
        if request.against.is_empty() {
            return Err(cinestream::Error::Incompatible {
                message: "against: no .bvh, .gltf, .glb, .fbx or .sjson files in the given sources"
                    .into(),
            });
        }
    }
    recipes::verify::verify(&request)
}

/// Internal, for measuring the binding's overhead: the seconds the Rust
/// sampler alone takes for the poses `sample_many(times)` returns, in this
/// process, without the GIL. `into` is "pose" (one reused pose of `glam`
/// transforms: the decode alone), "transforms" (every pose kept, as
/// `Transform`s) or "rows" (every pose kept as float32 rows, what
/// `sample_many` fills, without Python). Not part of the API.
#[pyfunction]
fn _rust_sample_seconds(
    py: Python<'_>,
    stream: &PyStream,
    times: Vec<f64>,
    into: &str,
) -> PyResult<f64> {
    let s = &stream.stream;
    let bones = s.meta().num_bones();
    let into = match into {
        "pose" | "transforms" | "rows" => into.to_string(),
        _ => {
            return Err(value_err(format!(
                "into must be pose, transforms or rows, not {into}"
            )))
        }
    };
    // Sized by the caller: allocated fallibly, before the clock starts.
    let mut all = match into.as_str() {
        "transforms" => filled(
            times.len(),
            bones,
            cinestream::Transform::IDENTITY,
            "the poses",
        )?,
        _ => Vec::new(),
    };
    let mut rows = match into.as_str() {
        "rows" => filled(times.len(), bones * VALUES, 0f32, "the poses")?,
        _ => Vec::new(),
    };
    py.detach(|| -> cinestream::Result<f64> {
        let start = Instant::now();
        match into.as_str() {
            "transforms" => {
                for (&t, pose) in times.iter().zip(all.chunks_exact_mut(bones.max(1))) {
                    s.sample(t, pose)?;
                }
                std::hint::black_box(&all);
            }
            "rows" => {
                stream.fill(&times, &mut rows)?;
                std::hint::black_box(&rows);
            }
            _ => {
                let mut pose = vec![cinestream::Transform::IDENTITY; bones];
                for &t in &times {
                    s.sample(t, &mut pose)?;
                    std::hint::black_box(&pose);
                }
            }
        }
        Ok(start.elapsed().as_secs_f64())
    })
    .map_err(lib_err)
}

/// The native module; `cinestream/__init__.py` re-exports it.
#[pymodule]
fn _cinestream(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CinestreamError", m.py().get_type::<CinestreamError>())?;
    m.add("CinestreamWarning", m.py().get_type::<CinestreamWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_PREVIEW_CM", DEFAULT_PREVIEW_CM)?;
    m.add_function(wrap_pyfunction!(pack, m)?)?;
    m.add_function(wrap_pyfunction!(batch, m)?)?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(_rust_sample_seconds, m)?)?;
    m.add_class::<PyStream>()?;
    m.add_class::<PySkeleton>()?;
    Ok(())
}
