//! `cinestream inspect`: what is inside a .cine container, for tool authors.

use std::path::PathBuf;
use std::process::ExitCode;

use cinestream::container::{ContainerIndex, StreamReader};
use cinestream::display::escaped;
use cinestream::format::{Channel, FloatSlot};
use cinestream::format::{ClipMeta, BIT_RATES, NUM_RATES};
use cinestream::recipes::load_skeleton;
use cinestream::{FloatKind, LoopMode};
use serde::Serialize;

use super::common::{print_json, Usage};

/// Bones the text output lists without --bones.
const BONES_SHOWN: usize = 20;
/// Pages the text output lists in full without --pages; more are summarised
/// as the first and last few.
const PAGES_SHOWN: usize = 12;
const PAGES_HEAD: usize = 8;
const PAGES_TAIL: usize = 2;

/// Print the header, clip metadata, skeleton, track classification, float
/// tracks, segment and page tables, bit-rate histogram and sizes of a .cine
/// file.
///
/// Every page is read and checked (checksum, lz4, segment layout), so a
/// corrupt file fails with an error naming the page. The text output
/// shortens the skeleton and page tables and leaves out the per-bone kinds
/// and the segment rows unless asked; --json always holds all of them.
///
/// Float tracks (morph weights, fields of view, curves) are listed with
/// their kind, components, precision (in their own unit; for a morph weight
/// of known displacement also that displacement and the vertex error the
/// precision allows), their slots' kinds and the bit rates of their
/// animated slots over the segments.
///
/// Example: cinestream inspect long.cine --pages --segments
#[derive(clap::Args)]
pub struct Args {
    /// The container file.
    file: PathBuf,
    /// List every bone, not only the first 20.
    #[arg(long)]
    bones: bool,
    /// List each bone's rotation, translation and scale kind.
    #[arg(long)]
    tracks: bool,
    /// List every page, not only the first and last few.
    #[arg(long)]
    pages: bool,
    /// List every segment.
    #[arg(long)]
    segments: bool,
    /// Print one JSON object with everything, whatever the other flags.
    #[arg(long)]
    json: bool,
    /// The skeleton of a file packed with --skeleton-by-reference: a .cine
    /// file or a source (BVH, glTF, FBX) that holds it.
    #[arg(long, value_name = "FILE")]
    skeleton: Option<PathBuf>,
}

/// Bit rates of one channel kind (or all), over every segment.
#[derive(Default, Clone, Copy)]
struct Rates {
    /// (track, segment) pairs at each bit-rate index.
    histogram: [u64; NUM_RATES as usize],
    /// Animated track-samples: tracks times the samples of their segments.
    track_samples: u64,
    /// Key bits of those track-samples, as stored.
    key_bits: u64,
    /// Bits per component the rates name, summed over track-samples.
    rate_bits: u64,
}

impl Rates {
    fn add(&mut self, other: &Rates) {
        for (h, o) in self.histogram.iter_mut().zip(other.histogram) {
            *h += o;
        }
        self.track_samples += other.track_samples;
        self.key_bits += other.key_bits;
        self.rate_bits += other.rate_bits;
    }

    fn pairs(&self) -> u64 {
        self.histogram.iter().sum()
    }

    /// Key bits per animated track-sample; `None` without animated tracks.
    fn mean_key_bits(&self) -> Option<f64> {
        (self.track_samples > 0).then(|| self.key_bits as f64 / self.track_samples as f64)
    }

    /// Mean bits per component the rates name (0, 3..=19 or 32).
    fn mean_rate_bits(&self) -> Option<f64> {
        (self.track_samples > 0).then(|| self.rate_bits as f64 / self.track_samples as f64)
    }

    fn report(&self) -> RatesReport<'_> {
        RatesReport {
            histogram: &self.histogram,
            track_segments: self.pairs(),
            track_samples: self.track_samples,
            mean_key_bits_per_track_sample: self.mean_key_bits(),
            mean_rate_bits: self.mean_rate_bits(),
        }
    }
}

/// One row of the segment table.
struct SegmentRow {
    first_sample: usize,
    samples: usize,
    page: u32,
    offset: u32,
    len: u32,
    /// Key bits of one sample, all tracks.
    sample_bits: usize,
}

/// The `--json` output: everything, whatever the other flags.
#[derive(Serialize)]
struct JsonReport<'a> {
    file: &'a str,
    header: HeaderReport<'a>,
    clip: ClipReport<'a>,
    skeleton: Vec<BoneReport<'a>>,
    tracks: TracksReport<'a>,
    floats: FloatsReport<'a>,
    steps: StepsReport<'a>,
    segments: Vec<SegmentReport>,
    pages: Vec<PageReport>,
    bit_rates: BitRatesReport<'a>,
    sizes: SizesReport,
    /// Null without a preview tier.
    preview: Option<PreviewReport>,
}

#[derive(Serialize)]
struct HeaderReport<'a> {
    magic: &'a str,
    version: u16,
    flags: u16,
    lz4: bool,
    file_len: u64,
    header_checksum: u32,
    metadata_offset: usize,
    metadata_len: u64,
    metadata_checksum: u32,
    index_offset: u64,
    index_len: u64,
    index_checksum: u32,
    pages_offset: u64,
    pages_len: u64,
}

#[derive(Serialize)]
struct ClipReport<'a> {
    name: &'a str,
    sample_rate: f32,
    samples: usize,
    segments: usize,
    duration_s: f64,
    r#loop: &'static str,
    unit: String,
    cm_per_unit: f64,
    threshold_cm: f64,
    shell_cm: f64,
    bones: usize,
    /// Samples where every track jumps (playback holds the one before).
    cuts: &'a [u32],
}

/// The tracks that hold between samples (format version 5).
#[derive(Serialize)]
struct StepsReport<'a> {
    /// Stepped tracks in all: a bone's rotation, translation and scale
    /// count one each, a float track one.
    tracks: usize,
    bones: Vec<SteppedBoneReport<'a>>,
    floats: Vec<&'a str>,
}

#[derive(Serialize)]
struct SteppedBoneReport<'a> {
    bone: usize,
    name: &'a str,
    rotation: bool,
    translation: bool,
    scale: bool,
}

#[derive(Serialize)]
struct BoneReport<'a> {
    index: usize,
    name: &'a str,
    parent: Option<usize>,
}

#[derive(Serialize)]
struct TracksReport<'a> {
    rotation: &'a Usage,
    translation: &'a Usage,
    scale: &'a Usage,
    total: &'a Usage,
    per_bone: Vec<BoneKindsReport>,
}

#[derive(Serialize)]
struct BoneKindsReport {
    bone: usize,
    rotation: &'static str,
    translation: &'static str,
    scale: &'static str,
}

/// The float tracks of the `--json` output.
#[derive(Serialize)]
struct FloatsReport<'a> {
    tracks: usize,
    slots: usize,
    slot_kinds: &'a Usage,
    /// What the float tracks take of the file's codec payload, counted as
    /// `CompressedClip::float_bytes` counts it.
    float_bytes: u64,
    per_track: Vec<FloatReport<'a>>,
}

/// One float track of the `--json` output.
#[derive(Serialize)]
struct FloatReport<'a> {
    index: usize,
    name: &'a str,
    kind: &'static str,
    components: u8,
    /// The largest error the codec may leave in a component, in the
    /// track's own unit.
    precision: f32,
    /// A morph target's largest vertex displacement at weight 1, in cm.
    max_displacement_cm: Option<f32>,
    /// The vertex error the precision allows: precision x displacement, in cm.
    vertex_bound_cm: Option<f64>,
    slot_kinds: Usage,
    slots: Vec<SlotReport>,
    /// Bits per component of the animated slots over every segment.
    rate_bits: Option<RateBits>,
    /// Key bits of the track over every stored sample.
    key_bits: u64,
}

/// One slot (up to three components) of a float track.
#[derive(Serialize)]
struct SlotReport {
    slot: usize,
    first_component: u8,
    components: u8,
    kind: &'static str,
}

/// Smallest, median and largest bits per component over (slot, segment) pairs.
#[derive(Serialize, Clone, Copy)]
struct RateBits {
    min: u8,
    median: u8,
    max: u8,
}

impl RateBits {
    /// `None` when `bits` is empty (no animated slot).
    fn of(bits: &[u8]) -> Option<RateBits> {
        let mut sorted = bits.to_vec();
        sorted.sort_unstable();
        Some(RateBits {
            min: *sorted.first()?,
            median: sorted[sorted.len() / 2],
            max: *sorted.last()?,
        })
    }
}

#[derive(Serialize)]
struct SegmentReport {
    index: usize,
    first_sample: usize,
    samples: usize,
    page: u32,
    offset: u32,
    len: u32,
    key_bits_per_sample: usize,
}

#[derive(Serialize)]
struct PageReport {
    index: usize,
    offset: u64,
    stored_len: u32,
    decoded_len: u32,
    compression: &'static str,
    checksum: u32,
    first_segment: usize,
    segment_count: usize,
    first_sample: usize,
    sample_count: usize,
}

#[derive(Serialize)]
struct BitRatesReport<'a> {
    bits: &'a [u8],
    all: RatesReport<'a>,
    rotation: RatesReport<'a>,
    translation: RatesReport<'a>,
    scale: RatesReport<'a>,
    float: RatesReport<'a>,
}

/// One channel kind's (or all) bit rates.
#[derive(Serialize)]
struct RatesReport<'a> {
    histogram: &'a [u64],
    track_segments: u64,
    track_samples: u64,
    mean_key_bits_per_track_sample: Option<f64>,
    mean_rate_bits: Option<f64>,
}

#[derive(Serialize)]
struct SizesReport {
    file_bytes: u64,
    header_bytes: usize,
    metadata_bytes: u64,
    index_bytes: u64,
    /// The preview tier (0 without one).
    preview_bytes: u64,
    page_stored_bytes: u64,
    page_decoded_bytes: u64,
    segment_header_bytes: u64,
    key_bytes: u64,
    float_bytes: u64,
    padding_bytes: u64,
    /// What the pages keep in memory once checked beyond their decoded
    /// bytes (decode tables), all pages resident.
    decode_state_bytes: u64,
    lz4_pages: usize,
    bytes_per_second: Option<f64>,
    page_bytes_per_second: Option<f64>,
}

/// Names the file in an error, unless the error already does (I/O errors).
fn in_file(file: &str, error: cinestream::Error) -> anyhow::Error {
    match error {
        cinestream::Error::Io { .. } => error.into(),
        other => anyhow::Error::new(other).context(file.to_string()),
    }
}

/// Where the bytes of the file go.
struct Sizes {
    stored: u64,
    decoded: u64,
    lz4_pages: usize,
    /// Rates and range slots of every segment.
    segment_headers: u64,
    /// Alignment padding between sections and pages.
    padding: u64,
    /// Bytes every page keeps in memory beyond its decoded bytes.
    decode_state: u64,
}

/// Everything inspect prints, text or JSON, gathered once.
struct Report<'a> {
    file: String,
    magic: String,
    index: &'a ContainerIndex,
    segments: Vec<SegmentRow>,
    /// Per channel: rotation, translation, scale, float.
    rates: [Rates; 4],
    all_rates: Rates,
    /// Per channel, then the total.
    usage: [Usage; 4],
    floats: Floats,
    sizes: Sizes,
    /// The preview tier (format version 3, optional from 4), if the file has one.
    preview: Option<PreviewReport>,
}

/// The preview tier: where it is and what the writer measured.
#[derive(Clone, Copy, Serialize)]
struct PreviewReport {
    offset: u64,
    len: u64,
    checksum: u32,
    /// Actors keyed apart.
    actors: usize,
    keys: usize,
    /// Largest object-space error against the full-quality decode (cm).
    bound_cm: f32,
    /// Largest float error, in units of each track's precision.
    float_bound: f32,
    /// What it keeps in memory once open: segments and decode tables.
    resident_bytes: u64,
}

/// The float tracks' slots, rates and bytes.
#[derive(Default)]
struct Floats {
    /// Each track's slot kinds, in slot order.
    slot_kinds: Vec<Vec<&'static str>>,
    /// Each track's default, constant and animated slots.
    usage: Vec<Usage>,
    /// All slots' kinds.
    total: Usage,
    /// Each track's bits per component, one per (animated slot, segment).
    rate_bits: Vec<Vec<u8>>,
    /// Each track's key bits over every stored sample.
    key_bits: Vec<u64>,
    /// As `CompressedClip::float_bytes` counts them.
    bytes: u64,
}

impl Floats {
    /// The slot kinds from the metadata; rates are added segment by segment.
    fn of(meta: &ClipMeta) -> Floats {
        let slots = meta.float_slots();
        let mut kind = vec!["default"; slots.len()];
        for c in meta
            .constants
            .iter()
            .filter(|c| c.channel == Channel::Float)
        {
            if let Some(k) = kind.get_mut(c.bone as usize) {
                *k = "constant";
            }
        }
        for t in meta.animated.iter().filter(|t| t.channel == Channel::Float) {
            if let Some(k) = kind.get_mut(t.bone as usize) {
                *k = "animated";
            }
        }
        let tracks = meta.floats.len();
        let mut floats = Floats {
            slot_kinds: vec![Vec::new(); tracks],
            usage: (0..tracks).map(|_| Usage::default()).collect(),
            rate_bits: vec![Vec::new(); tracks],
            key_bits: vec![0; tracks],
            ..Floats::default()
        };
        for (slot, k) in slots.iter().zip(kind) {
            let track = slot.track as usize;
            if track >= tracks {
                continue;
            }
            floats.slot_kinds[track].push(k);
            for usage in [&mut floats.usage[track], &mut floats.total] {
                match k {
                    "animated" => usage.animated += 1,
                    "constant" => usage.constant += 1,
                    _ => usage.default += 1,
                }
            }
        }
        floats.bytes =
            (slots.len() + floats.total.constant * 12 + floats.total.animated * 24) as u64;
        floats
    }

    /// The slots of `track`: their indices among all slots, and kinds.
    fn slots<'m>(
        &self,
        meta: &'m ClipMeta,
        track: usize,
    ) -> Vec<(usize, &'m FloatSlot, &'static str)> {
        meta.float_slots()
            .iter()
            .enumerate()
            .filter(|(_, s)| s.track as usize == track)
            .zip(self.slot_kinds[track].iter().copied())
            .map(|((i, slot), kind)| (i, slot, kind))
            .collect()
    }
}

/// A morph weight's displacement at weight 1, when known.
fn displacement_cm(kind: FloatKind) -> Option<f32> {
    match kind {
        FloatKind::MorphWeight {
            max_displacement_cm,
        } => max_displacement_cm,
        _ => None,
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let file = args.file.display().to_string();
    let skeleton = match &args.skeleton {
        Some(path) => Some(load_skeleton(path)?),
        None => None,
    };
    let reader = StreamReader::open_file_with_skeleton(&args.file, skeleton.as_ref())
        .map_err(|e| in_file(&file, e))?;
    let report = gather(file, &reader)?;
    if args.json {
        print_json(&report.json())?;
    } else {
        report.print_text(&args);
    }
    Ok(ExitCode::SUCCESS)
}

/// What `inspect --json` prints of the file `reader` reads (`file` names
/// it): the viewer's inspect panel.
pub fn json_summary<D: AsRef<[u8]>>(
    file: String,
    reader: &StreamReader<D>,
) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::to_value(gather(file, reader)?.json())?)
}

fn gather<D: AsRef<[u8]>>(file: String, reader: &StreamReader<D>) -> anyhow::Result<Report<'_>> {
    let index = reader.index();
    let meta = reader.meta();

    // Reading every segment's rates checks every page on the way, so a
    // corrupt file stops here with the page named, before anything is printed.
    let mut rates = [Rates::default(); 4];
    let mut floats = Floats::of(meta);
    let mut segments = Vec::with_capacity(index.segments().len());
    for page in 0..index.pages().len() {
        reader.page_bytes(page).map_err(|e| in_file(&file, e))?;
        for segment in index.page_segments(page) {
            let view = reader
                .segment_view(segment)
                .map_err(|e| in_file(&file, e))?;
            let (first_sample, samples) = meta.segments.segment(segment);
            let mut float_bits = 0;
            let mut float_slots = 0;
            for (t, track) in meta.animated.iter().enumerate() {
                let rate = view.rate(t);
                let r = &mut rates[track.channel as usize];
                let bits = view.key_bits_of(t, track);
                r.histogram[rate as usize] += 1;
                r.track_samples += samples as u64;
                r.key_bits += (bits * samples) as u64;
                r.rate_bits += u64::from(BIT_RATES[rate as usize]) * samples as u64;
                if track.channel == Channel::Float {
                    float_bits += bits;
                    float_slots += 1;
                    if let Some(slot) = meta.float_slots().get(track.bone as usize) {
                        let f = slot.track as usize;
                        if let Some(list) = floats.rate_bits.get_mut(f) {
                            list.push(BIT_RATES[rate as usize]);
                            floats.key_bits[f] += (bits * samples) as u64;
                        }
                    }
                }
            }
            floats.bytes +=
                view.header_len_of(float_slots) as u64 + (float_bits * samples).div_ceil(8) as u64;
            let entry = index.segments()[segment];
            segments.push(SegmentRow {
                first_sample,
                samples,
                page: entry.page,
                offset: entry.offset,
                len: entry.len,
                sample_bits: view.sample_bits(),
            });
        }
    }
    // The page checks leave out the zero padding between pages; verify
    // covers it (the pages it checks again are already checked and kept).
    if let Some((_, message)) = reader.verify().corrupt_pages.first() {
        anyhow::bail!("{file}: {message}");
    }
    let mut all_rates = Rates::default();
    for r in &rates {
        all_rates.add(r);
    }
    let [rotation, translation, scale] = [0, 1, 2].map(|channel| Usage::of(&meta.kinds, channel));
    let total = Usage {
        animated: rotation.animated + translation.animated + scale.animated,
        constant: rotation.constant + translation.constant + scale.constant,
        default: rotation.default + translation.default + scale.default,
    };

    let header = index.header();
    let pages = index.pages();
    let stored: u64 = pages.iter().map(|p| p.stored_len as u64).sum();
    let sizes = Sizes {
        stored,
        decoded: pages.iter().map(|p| p.decoded_len as u64).sum(),
        lz4_pages: pages.iter().filter(|p| p.is_lz4()).count(),
        segment_headers: (meta.segment_header_bytes() * segments.len()) as u64,
        padding: header.file_len
            - header.header_len() as u64
            - header.metadata_len
            - header.index_len
            - header.preview_len
            - stored,
        decode_state: (0..pages.len())
            .map(|p| reader.resident_cost(p) as u64)
            .sum::<u64>()
            .saturating_sub(pages.iter().map(|p| p.decoded_len as u64).sum()),
    };
    let preview = reader.preview().map(|tier| PreviewReport {
        offset: header.preview_offset(),
        len: header.preview_len,
        checksum: header.preview_checksum(),
        actors: tier.actors(),
        keys: tier.keys(),
        bound_cm: tier.bound_cm(),
        float_bound: tier.float_bound(),
        resident_bytes: tier.resident_bytes(),
    });
    let magic = reader.data().as_ref().get(..8).unwrap_or(&[]);
    Ok(Report {
        preview,
        file,
        magic: String::from_utf8_lossy(magic).into_owned(),
        index,
        segments,
        rates,
        all_rates,
        usage: [rotation, translation, scale, total],
        floats,
        sizes,
    })
}

/// Cuts and stepped tracks the text report lists before "... more".
const LISTED: usize = 8;

/// The stepped tracks of `meta`, bone by bone, then the float tracks.
fn steps_report(meta: &ClipMeta) -> StepsReport<'_> {
    let bones: Vec<SteppedBoneReport<'_>> = meta
        .bone_steps()
        .iter()
        .zip(meta.skeleton.bones())
        .enumerate()
        .filter(|(_, (s, _))| s.any())
        .map(|(bone, (s, b))| SteppedBoneReport {
            bone,
            name: &b.name,
            rotation: s.rotation,
            translation: s.translation,
            scale: s.scale,
        })
        .collect();
    let floats: Vec<&str> = meta
        .floats
        .iter()
        .zip(meta.float_steps())
        .filter(|(_, &s)| s)
        .map(|(f, _)| f.name.as_str())
        .collect();
    let bone_tracks: usize = bones
        .iter()
        .map(|b| usize::from(b.rotation) + usize::from(b.translation) + usize::from(b.scale))
        .sum();
    StepsReport {
        tracks: bone_tracks + floats.len(),
        bones,
        floats,
    }
}

fn loop_name(mode: LoopMode) -> &'static str {
    match mode {
        LoopMode::Clamp => "clamp",
        LoopMode::Wrap => "wrap",
    }
}

fn compression_name(page: &cinestream::container::PageEntry) -> &'static str {
    if page.is_lz4() {
        "lz4"
    } else {
        "none"
    }
}

impl Report<'_> {
    /// Bytes per second of animation; `None` for a clip that lasts no time.
    fn per_second(&self, bytes: u64) -> Option<f64> {
        let duration = self.index.meta().duration();
        (duration > 0.0).then(|| bytes as f64 / duration)
    }

    fn json(&self) -> JsonReport<'_> {
        let index = self.index;
        let meta = index.meta();
        let header = index.header();
        let sizes = &self.sizes;
        let usage = &self.usage;
        JsonReport {
            file: &self.file,
            header: HeaderReport {
                magic: &self.magic,
                version: header.version(),
                flags: header.flags,
                lz4: header.lz4_pages(),
                file_len: header.file_len,
                header_checksum: header.header_checksum(),
                metadata_offset: header.header_len(),
                metadata_len: header.metadata_len,
                metadata_checksum: header.metadata_checksum(),
                index_offset: header.index_offset,
                index_len: header.index_len,
                index_checksum: header.index_checksum(),
                pages_offset: header.pages_offset,
                pages_len: header.file_len - header.pages_offset,
            },
            clip: ClipReport {
                name: &meta.name,
                sample_rate: meta.sample_rate,
                samples: meta.num_samples(),
                segments: meta.segments.count(),
                duration_s: meta.duration(),
                r#loop: loop_name(meta.loop_mode),
                unit: meta.unit.to_string(),
                cm_per_unit: meta.unit.cm_per_unit(),
                threshold_cm: meta.threshold_cm,
                shell_cm: meta.shell_cm,
                bones: meta.num_bones(),
                cuts: meta.cuts(),
            },
            steps: steps_report(meta),
            skeleton: meta
                .skeleton
                .bones()
                .iter()
                .enumerate()
                .map(|(index, b)| BoneReport {
                    index,
                    name: &b.name,
                    parent: b.parent,
                })
                .collect(),
            tracks: TracksReport {
                rotation: &usage[0],
                translation: &usage[1],
                scale: &usage[2],
                total: &usage[3],
                per_bone: meta
                    .kinds
                    .iter()
                    .enumerate()
                    .map(|(bone, k)| BoneKindsReport {
                        bone,
                        rotation: k[0].name(),
                        translation: k[1].name(),
                        scale: k[2].name(),
                    })
                    .collect(),
            },
            floats: self.floats_json(),
            segments: self
                .segments
                .iter()
                .enumerate()
                .map(|(index, s)| SegmentReport {
                    index,
                    first_sample: s.first_sample,
                    samples: s.samples,
                    page: s.page,
                    offset: s.offset,
                    len: s.len,
                    key_bits_per_sample: s.sample_bits,
                })
                .collect(),
            pages: index
                .pages()
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let held = index.page_segments(i);
                    let samples = index.page_samples(i);
                    PageReport {
                        index: i,
                        offset: p.offset,
                        stored_len: p.stored_len,
                        decoded_len: p.decoded_len,
                        compression: compression_name(p),
                        checksum: p.checksum,
                        first_segment: held.start,
                        segment_count: held.len(),
                        first_sample: samples.start,
                        sample_count: samples.len(),
                    }
                })
                .collect(),
            bit_rates: BitRatesReport {
                bits: &BIT_RATES,
                all: self.all_rates.report(),
                rotation: self.rates[0].report(),
                translation: self.rates[1].report(),
                scale: self.rates[2].report(),
                float: self.rates[3].report(),
            },
            sizes: SizesReport {
                file_bytes: header.file_len,
                header_bytes: header.header_len(),
                metadata_bytes: header.metadata_len,
                index_bytes: header.index_len,
                preview_bytes: header.preview_len,
                page_stored_bytes: sizes.stored,
                page_decoded_bytes: sizes.decoded,
                segment_header_bytes: sizes.segment_headers,
                key_bytes: sizes.decoded - sizes.segment_headers,
                float_bytes: self.floats.bytes,
                padding_bytes: sizes.padding,
                decode_state_bytes: sizes.decode_state,
                lz4_pages: sizes.lz4_pages,
                bytes_per_second: self.per_second(header.file_len),
                page_bytes_per_second: self.per_second(sizes.stored),
            },
            preview: self.preview,
        }
    }

    fn floats_json(&self) -> FloatsReport<'_> {
        let meta = self.index.meta();
        let floats = &self.floats;
        FloatsReport {
            tracks: meta.floats.len(),
            slots: meta.float_slots().len(),
            slot_kinds: &floats.total,
            float_bytes: floats.bytes,
            per_track: meta
                .floats
                .iter()
                .enumerate()
                .map(|(index, f)| {
                    let displacement = displacement_cm(f.kind);
                    FloatReport {
                        index,
                        name: &f.name,
                        kind: f.kind.name(),
                        components: f.components,
                        precision: f.precision,
                        max_displacement_cm: displacement,
                        vertex_bound_cm: displacement
                            .map(|d| f64::from(f.precision) * f64::from(d)),
                        slot_kinds: Usage {
                            animated: floats.usage[index].animated,
                            constant: floats.usage[index].constant,
                            default: floats.usage[index].default,
                        },
                        slots: floats
                            .slots(meta, index)
                            .into_iter()
                            .map(|(index, slot, kind)| SlotReport {
                                slot: index,
                                first_component: slot.first,
                                components: slot.count,
                                kind,
                            })
                            .collect(),
                        rate_bits: RateBits::of(&floats.rate_bits[index]),
                        key_bits: floats.key_bits[index],
                    }
                })
                .collect(),
        }
    }

    fn print_text(&self, args: &Args) {
        self.print_header();
        let meta = self.index.meta();
        if !meta.cuts().is_empty() || meta.has_steps() {
            self.print_steps();
        }
        println!();
        self.print_skeleton(args.bones);
        println!();
        self.print_tracks(args.tracks);
        println!();
        if !self.index.meta().floats.is_empty() {
            self.print_floats();
            println!();
        }
        self.print_segments(args.segments);
        self.print_pages(args.pages);
        println!();
        self.print_rates();
        println!();
        self.print_sizes();
    }

    fn print_header(&self) {
        let header = self.index.header();
        let meta = self.index.meta();
        println!("file        {}", self.file);
        println!(
            "header      magic {}, version {}, flags {:#06x} (lz4 pages: {}), {} bytes, checksum {:08x}",
            self.magic,
            header.version(),
            header.flags,
            if header.lz4_pages() { "yes" } else { "no" },
            header.file_len,
            header.header_checksum()
        );
        println!(
            "sections    metadata {}..{} ({} bytes, checksum {:08x})",
            header.header_len(),
            header.header_len() as u64 + header.metadata_len,
            header.metadata_len,
            header.metadata_checksum()
        );
        println!(
            "            index {}..{} ({} bytes, checksum {:08x})",
            header.index_offset,
            header.index_offset + header.index_len,
            header.index_len,
            header.index_checksum()
        );
        if let Some(p) = &self.preview {
            println!(
                "            preview {}..{} ({} bytes, checksum {:08x}): {} actors, {} keys, within {:.3} cm of the full quality (floats {:.2} precisions), {} bytes resident",
                p.offset,
                p.offset + p.len,
                p.len,
                p.checksum,
                p.actors,
                p.keys,
                p.bound_cm,
                p.float_bound,
                p.resident_bytes
            );
        }
        println!(
            "            pages {}..{} ({} bytes in {} pages, {} lz4)",
            header.pages_offset,
            header.file_len,
            header.file_len - header.pages_offset,
            self.index.pages().len(),
            self.sizes.lz4_pages
        );
        println!(
            "clip        '{}': {} samples at {} Hz, {:.3} s, {}, unit {}",
            escaped(&meta.name),
            meta.num_samples(),
            meta.sample_rate,
            meta.duration(),
            loop_name(meta.loop_mode),
            meta.unit
        );
        println!(
            "            compressed to {} cm at a {} cm shell; {} bones, {} segments",
            meta.threshold_cm,
            meta.shell_cm,
            meta.num_bones(),
            meta.segments.count()
        );
        if let Some(s) = &meta.screen {
            let camera = meta
                .skeleton
                .bones()
                .get(s.camera as usize)
                .map_or("?", |b| b.name.as_str());
            println!(
                "screen      within {} px at {}x{} through '{}' (measured {:.3} px), every bone within {} cm (measured {:.5} cm)",
                s.pixels,
                s.resolution.0,
                s.resolution.1,
                escaped(camera),
                s.worst_px,
                s.max_cm,
                s.worst_cm
            );
        }
    }

    /// The cuts and the stepped tracks, when the clip has any.
    fn print_steps(&self) {
        let meta = self.index.meta();
        let steps = steps_report(meta);
        if !meta.cuts().is_empty() {
            let at: Vec<String> = meta
                .cuts()
                .iter()
                .take(LISTED)
                .map(|&c| format!("{c} ({:.3} s)", f64::from(c) / f64::from(meta.sample_rate)))
                .collect();
            let more = match meta.cuts().len().saturating_sub(LISTED) {
                0 => String::new(),
                n => format!(", ... {n} more (--json lists all)"),
            };
            println!(
                "cuts        {}: at samples {}{more}",
                meta.cuts().len(),
                at.join(", ")
            );
        }
        if steps.tracks > 0 {
            let names: Vec<String> = steps
                .bones
                .iter()
                .flat_map(|b| {
                    let channels = [
                        (b.rotation, "rotation"),
                        (b.translation, "translation"),
                        (b.scale, "scale"),
                    ];
                    channels
                        .into_iter()
                        .filter(|(on, _)| *on)
                        .map(move |(_, channel)| format!("'{}' {channel}", escaped(b.name)))
                })
                .chain(
                    steps
                        .floats
                        .iter()
                        .map(|name| format!("float '{}'", escaped(name))),
                )
                .collect();
            let more = match names.len().saturating_sub(LISTED) {
                0 => String::new(),
                n => format!(", ... {n} more (--json lists all)"),
            };
            println!(
                "stepped     {} tracks hold between samples: {}{more}",
                steps.tracks,
                names[..names.len().min(LISTED)].join(", ")
            );
        }
    }

    fn print_skeleton(&self, all: bool) {
        let bones = self.index.meta().skeleton.bones();
        let roots = bones.iter().filter(|b| b.parent.is_none()).count();
        let plural = if roots == 1 { "" } else { "s" };
        println!("skeleton    {} bones, {roots} root{plural}", bones.len());
        println!("  {:>5} {:>6}  name", "bone", "parent");
        let shown = if all {
            bones.len()
        } else {
            BONES_SHOWN.min(bones.len())
        };
        // Parents come before children, so one pass finds every depth.
        let mut depth = vec![0usize; bones.len()];
        for (i, bone) in bones.iter().enumerate() {
            if let Some(p) = bone.parent {
                depth[i] = depth[p] + 1;
            }
        }
        for (i, bone) in bones.iter().enumerate().take(shown) {
            let parent = bone.parent.map_or("-".to_string(), |p| p.to_string());
            println!(
                "  {i:>5} {parent:>6}  {}{}",
                "  ".repeat(depth[i]),
                escaped(&bone.name)
            );
        }
        if shown < bones.len() {
            println!(
                "  ... {} more bones (--bones lists all)",
                bones.len() - shown
            );
        }
    }

    fn print_tracks(&self, per_bone: bool) {
        println!(
            "tracks      {:<12} {:>8} {:>8} {:>8}",
            "", "default", "constant", "animated"
        );
        let names = Channel::ALL.iter().map(|c| c.name()).chain(["total"]);
        for (name, u) in names.zip(&self.usage) {
            println!(
                "            {name:<12} {:>8} {:>8} {:>8}",
                u.default, u.constant, u.animated
            );
        }
        if per_bone {
            let meta = self.index.meta();
            println!(
                "  {:>5}  {:<32} {:<9} {:<11} {:<9}",
                "bone", "name", "rotation", "translation", "scale"
            );
            for (i, (bone, k)) in meta.skeleton.bones().iter().zip(&meta.kinds).enumerate() {
                println!(
                    "  {i:>5}  {:<32} {:<9} {:<11} {:<9}",
                    escaped(&bone.name),
                    k[0].name(),
                    k[1].name(),
                    k[2].name()
                );
            }
        }
    }

    fn print_floats(&self) {
        let meta = self.index.meta();
        let floats = &self.floats;
        let total = &floats.total;
        println!(
            "floats      {} tracks in {} slots: {} default, {} constant, {} animated; {} bytes",
            meta.floats.len(),
            meta.float_slots().len(),
            total.default,
            total.constant,
            total.animated,
            floats.bytes
        );
        println!(
            "  {:>5}  {:<28} {:<13} {:>4} {:>10} {:>9} {:>9}  {:<7} bits min/med/max",
            "track", "name", "kind", "comp", "precision", "disp cm", "vertex cm", "a/c/d",
        );
        for (i, f) in meta.floats.iter().enumerate() {
            let displacement = displacement_cm(f.kind);
            let cm = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4}"));
            let bits = RateBits::of(&floats.rate_bits[i]).map_or("-".to_string(), |r| {
                format!("{}/{}/{}", r.min, r.median, r.max)
            });
            println!(
                "  {i:>5}  {:<28} {:<13} {:>4} {:>10.3e} {:>9} {:>9}  {:<7} {bits}",
                escaped(&f.name),
                f.kind.name(),
                f.components,
                f.precision,
                cm(displacement.map(f64::from)),
                cm(displacement.map(|d| f64::from(d) * f64::from(f.precision))),
                floats.usage[i].cell(),
            );
        }
    }

    fn print_segments(&self, rows: bool) {
        let segments = &self.segments;
        let (shortest, longest) = segments.iter().fold((usize::MAX, 0), |(lo, hi), s| {
            (lo.min(s.samples), hi.max(s.samples))
        });
        // A range in words: "16 samples" when every segment has as many.
        let samples = match shortest == longest {
            true => format!("{longest}"),
            false => format!("{shortest} to {longest}"),
        };
        println!(
            "segments    {} of {samples} samples, {} to {} bytes",
            segments.len(),
            segments.iter().map(|s| s.len).min().unwrap_or(0),
            segments.iter().map(|s| s.len).max().unwrap_or(0)
        );
        if rows {
            println!(
                "  {:>7} {:>8} {:>7} {:>6} {:>8} {:>7} {:>10}",
                "segment", "first", "samples", "page", "offset", "bytes", "bits/sample"
            );
            for (i, s) in segments.iter().enumerate() {
                println!(
                    "  {i:>7} {:>8} {:>7} {:>6} {:>8} {:>7} {:>10}",
                    s.first_sample, s.samples, s.page, s.offset, s.len, s.sample_bits
                );
            }
        }
    }

    fn print_pages(&self, all: bool) {
        let index = self.index;
        let pages = index.pages();
        println!(
            "pages       {} pages, {} bytes stored, {} decoded, {} lz4",
            pages.len(),
            self.sizes.stored,
            self.sizes.decoded,
            self.sizes.lz4_pages
        );
        println!(
            "  {:>5} {:>10} {:>8} {:>8} {:>5} {:>8}  {:<13} samples",
            "page", "offset", "stored", "decoded", "comp", "checksum", "segments"
        );
        let listed: Vec<usize> = if all || pages.len() <= PAGES_SHOWN {
            (0..pages.len()).collect()
        } else {
            (0..PAGES_HEAD)
                .chain(pages.len() - PAGES_TAIL..pages.len())
                .collect()
        };
        for (row, &i) in listed.iter().enumerate() {
            if row > 0 && listed[row - 1] + 1 != i {
                println!(
                    "  ... {} more pages (--pages lists all)",
                    i - listed[row - 1] - 1
                );
            }
            let p = pages[i];
            let held = index.page_segments(i);
            let samples = index.page_samples(i);
            println!(
                "  {i:>5} {:>10} {:>8} {:>8} {:>5} {:08x}  {:<13} {}..{}",
                p.offset,
                p.stored_len,
                p.decoded_len,
                compression_name(&p),
                p.checksum,
                format!("{}..{}", held.start, held.end),
                samples.start,
                samples.end
            );
        }
    }

    fn print_rates(&self) {
        let rates = &self.rates;
        // The float column only for files with float tracks: a file of
        // bones alone reads as it always has.
        let floats = !self.index.meta().floats.is_empty();
        let float_cell = |v: String| match floats {
            true => format!(" {v:>9}"),
            false => String::new(),
        };
        println!(
            "bit rates   (track, segment) pairs at each rate, in bits per component as stored"
        );
        println!(
            "  {:>4} {:>9} {:>7} {:>9} {:>11} {:>9}{}",
            "bits",
            "pairs",
            "share",
            "rotation",
            "translation",
            "scale",
            float_cell("float".to_string())
        );
        let total_pairs = self.all_rates.pairs();
        for (rate, &bits) in BIT_RATES.iter().enumerate() {
            let n = self.all_rates.histogram[rate];
            if n == 0 {
                continue;
            }
            println!(
                "  {bits:>4} {n:>9} {:>6.2}% {:>9} {:>11} {:>9}{}",
                100.0 * n as f64 / total_pairs as f64,
                rates[0].histogram[rate],
                rates[1].histogram[rate],
                rates[2].histogram[rate],
                float_cell(rates[3].histogram[rate].to_string())
            );
        }
        println!(
            "  {:>4} {total_pairs:>9} {:>7} {:>9} {:>11} {:>9}{}",
            "all",
            "",
            rates[0].pairs(),
            rates[1].pairs(),
            rates[2].pairs(),
            float_cell(rates[3].pairs().to_string())
        );
        let mean = |v: Option<f64>| v.map_or("-".to_string(), |m| format!("{m:.2}"));
        for (label, pick) in [
            (
                "mean key bits per track-sample",
                Rates::mean_key_bits as fn(&Rates) -> Option<f64>,
            ),
            ("mean rate bits per component", Rates::mean_rate_bits),
        ] {
            let float = match floats {
                true => format!(", float {}", mean(pick(&rates[3]))),
                false => String::new(),
            };
            println!(
                "  {label}: {} (rotation {}, translation {}, scale {}{float})",
                mean(pick(&self.all_rates)),
                mean(pick(&rates[0])),
                mean(pick(&rates[1])),
                mean(pick(&rates[2]))
            );
        }
    }

    fn print_sizes(&self) {
        let header = self.index.header();
        let sizes = &self.sizes;
        println!(
            "sizes       header {}, metadata {}, index {}, {}pages {} stored ({} decoded: {} segment headers, {} keys), padding {}; {} bytes{}",
            header.header_len(),
            header.metadata_len,
            header.index_len,
            match header.preview_len {
                0 => String::new(),
                len => format!("preview tier {len}, "),
            },
            sizes.stored,
            sizes.decoded,
            sizes.segment_headers,
            sizes.decoded - sizes.segment_headers,
            sizes.padding,
            header.file_len,
            match self.index.meta().floats.is_empty() {
                true => String::new(),
                false => format!(
                    "; float tracks {} of them (metadata and segments)",
                    self.floats.bytes
                ),
            }
        );
        match (
            self.per_second(header.file_len),
            self.per_second(sizes.stored),
        ) {
            (Some(file_rate), Some(page_rate)) => println!(
                "            {file_rate:.0} bytes per second of animation ({page_rate:.0} in pages)"
            ),
            _ => println!("            bytes per second: none (the clip lasts no time)"),
        }
        println!(
            "resident    {} bytes with every page checked: {} page bytes + {} decode state ({:.1} % of the page bytes)",
            sizes.decoded + sizes.decode_state,
            sizes.decoded,
            sizes.decode_state,
            100.0 * sizes.decode_state as f64 / sizes.decoded.max(1) as f64
        );
    }
}
