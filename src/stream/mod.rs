//! Streaming playback from disk: a container opened over a [`Source`], its
//! pages resident under a memory budget, and a prefetch thread that keeps
//! the pages ahead of every playhead in memory.
//!
//! A [`Stream`] reads only the table of contents at open. Sampling is the
//! stateless sampler of [`crate::sample`] over the stream's resident pages,
//! from any number of threads. What happens when a page is not resident is
//! the stream's [`MissingPage`] policy:
//!
//! - [`MissingPage::Block`] (the default): the sampler loads the page itself
//!   and waits. The pose is always right, however small the budget and
//!   however many threads sample: the load hands the sampler the page it
//!   made resident, held until the decode is done. The wait is counted as a
//!   stall and timed in [`StreamStats`].
//! - [`MissingPage::NotReady`]: the sampler returns
//!   [`Error::PageNotReady`] at once and asks the prefetcher for the page,
//!   so an engine can hold its last pose for a frame. Pages asked for this
//!   way are loaded in the order asked, each evicting the page wanted least
//!   that is not promised to another sampler that asked, and are promised
//!   to their sampler until it gets them: when more playheads want pages
//!   now than the budget holds, they take turns, and every player that
//!   keeps asking gets its page within a few loads and frames.
//!
//! - [`MissingPage::Preview`]: as `NotReady`, but instead of an error the
//!   sampler decodes the time from the file's preview tier, resident since
//!   open, and reports the pose as a preview within the tier's stored bound
//!   ([`Quality`]); a frame never waits for the disk.
//!
//! The prefetch worker (`stream/prefetch.rs`) follows the playheads players
//! post to their mailboxes (`stream/playhead.rs`: time, rate, loop mode,
//! seeks) and loads the pages covering the next
//! [`StreamOptions::lookahead_seconds`] of play, times the rate, in the
//! direction of play, wrapping around loops. The cache (`stream/cache.rs`) evicts the
//! pages every playhead will reach last, and keeps the directory of where
//! each resident segment's tables and keys are (`stream/directory.rs`) that
//! players prefetch from. Dropping the stream stops and joins the worker.
//!
//! tracing: `stream_open` span; `page load` (debug, with cause and time),
//! `stall` (debug), `evict` (debug) events; the worker runs in a `prefetch` span.

mod cache;
mod directory;
mod playhead;
mod prefetch;
#[cfg(feature = "harness")]
mod throttle;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::Guard;

use crate::clip::{Skeleton, Transform};
use crate::container::byte_source::HostPrefix;
use crate::container::bytes::try_extend;
use crate::container::read::{resident_cost, ReadyPage};
use crate::container::PreviewTier;
use crate::container::HEADER_LEN;
use crate::error::{Error, Result};
use crate::format::ClipMeta;
use crate::sample::plan::DecodePlan;
use crate::sample::Sampling;
use crate::sample::{
    self, KeyPair, PoseWriter, Quality, SampleRounding, SegmentHandle, SegmentRef, SegmentSource,
};
use crate::{
    container::{ContainerIndex, Header},
    error::ContainerError,
};
pub use cache::StreamStats;
use cache::{Admission, Counters, PageCache, ResidentPage};
use playhead::Mailboxes;
use playhead::Scorer;
pub(crate) use playhead::{Hint, Mailbox};
use prefetch::{Prefetcher, Request};
// Where a stream's bytes come from; defined beside the container, which
// reads a whole file through the same sources.
pub use crate::container::byte_source::{FileSource, MappedSource, MemorySource, PageData, Source};
#[cfg(feature = "harness")]
#[cfg_attr(docsrs, doc(cfg(feature = "harness")))]
pub use throttle::{drop_from_os_cache, slow_read_time, SlowSource};

/// What a sampler does when the page it needs is not resident.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingPage {
    /// Load it and wait (counted as a stall).
    #[default]
    Block,
    /// Return [`Error::PageNotReady`] and ask the prefetcher for it (or,
    /// on a stream whose pages the host provides, put it first among
    /// [`Stream::wanted_pages`]). Needs the prefetch thread
    /// ([`StreamOptions::prefetch`]) or the host; without either the page
    /// comes only from [`Stream::preload`], and [`Stream::open_file`]
    /// refuses the setting.
    NotReady,
    /// Decode that time from the file's preview tier (resident from open;
    /// no disk, no wait, no allocation), say so
    /// ([`Quality::Preview`], with the
    /// tier's bound) and ask for the page first, as `NotReady` does; once
    /// it is resident the full-quality pose returns. Needs a file with a
    /// preview tier (format version 3, `pack --preview-cm`): opening one
    /// without is an error.
    Preview,
}

/// Longest prefetch lookahead [`StreamOptions::check`] accepts, in seconds
/// of play: an hour, far beyond any budget's reach, and small enough that
/// seconds times any playback rate times any sample rate stays an exact
/// sample count.
pub const MAX_LOOKAHEAD_SECONDS: f64 = 3600.0;

/// The prefetcher ticks [`StreamOptions::check`] accepts: from 100 µs (more
/// often only spins) to one second (slower cannot keep a lookahead).
pub(crate) const TICK_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_micros(100)..=Duration::from_secs(1);

/// How a stream holds and fetches pages.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct StreamOptions {
    /// Most bytes of resident pages (decoded bytes plus decode tables). Must
    /// hold at least two of the stream's largest pages. A prefetch never
    /// goes over it. A blocking sampler that needs a page while every page
    /// the budget holds is in use by samplers loads it anyway, over the
    /// budget (the peak counter shows it), and decodes from the page it
    /// loaded however soon another load evicts it. The overshoot is only
    /// pages samplers hold: a sampler holds at most the two pages of one
    /// pose, so with `T` threads sampling at once the resident bytes stay
    /// within the larger of the budget and `2 T + 1` of the largest pages
    /// (the one more is a page the prefetcher is loading). When the
    /// samplers let go, the cache evicts what it holds over the budget.
    pub budget_bytes: u64,
    /// Seconds of play (at rate 1) the prefetcher keeps resident ahead of
    /// each playhead, in `0..=`[`MAX_LOOKAHEAD_SECONDS`].
    pub lookahead_seconds: f64,
    /// What a sampler does on a page that is not resident.
    pub missing_page: MissingPage,
    /// Run a prefetch thread.
    pub prefetch: bool,
    /// How often an active prefetcher looks at the playheads, in
    /// `TICK_RANGE`.
    pub tick: Duration,
    /// The skeleton the file was written with, for a file that leaves it
    /// out (format version 6, `WriteOptions::with_skeleton_by_reference`);
    /// a file that stores its skeleton is opened only if it is this one.
    /// Default: none.
    pub skeleton: Option<Arc<Skeleton>>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            budget_bytes: 64 << 20,
            lookahead_seconds: 4.0,
            missing_page: MissingPage::Block,
            prefetch: true,
            tick: Duration::from_millis(5),
            skeleton: None,
        }
    }
}

impl StreamOptions {
    /// Sets the skeleton the file was written with (see
    /// [`StreamOptions::skeleton`]).
    pub fn with_skeleton(mut self, skeleton: Arc<Skeleton>) -> Self {
        self.skeleton = Some(skeleton);
        self
    }

    /// Sets the memory budget.
    pub fn with_budget_bytes(mut self, bytes: u64) -> Self {
        self.budget_bytes = bytes;
        self
    }

    /// Sets the prefetch lookahead.
    pub fn with_lookahead_seconds(mut self, seconds: f64) -> Self {
        self.lookahead_seconds = seconds;
        self
    }

    /// Sets the missing-page policy.
    pub fn with_missing_page(mut self, policy: MissingPage) -> Self {
        self.missing_page = policy;
        self
    }

    /// Turns the prefetch thread on or off.
    pub fn with_prefetch(mut self, prefetch: bool) -> Self {
        self.prefetch = prefetch;
        self
    }

    /// Sets how often an active prefetcher looks at the playheads.
    pub fn with_tick(mut self, tick: Duration) -> Self {
        self.tick = tick;
        self
    }

    /// Checks the settings that do not depend on the file (the lookahead
    /// in `0..=`[`MAX_LOOKAHEAD_SECONDS`], the tick in `TICK_RANGE`); the
    /// error names the setting, its range and the value.
    /// [`Stream::open`] checks these first, then that the budget holds two
    /// of the file's largest pages.
    pub fn check(&self) -> Result<()> {
        if !(0.0..=MAX_LOOKAHEAD_SECONDS).contains(&self.lookahead_seconds) {
            return Err(Error::InvalidSettings {
                message: format!(
                    "lookahead_seconds must be in [0, {MAX_LOOKAHEAD_SECONDS}] s, not {}",
                    self.lookahead_seconds
                ),
            });
        }
        if !TICK_RANGE.contains(&self.tick) {
            return Err(Error::InvalidSettings {
                message: format!(
                    "tick must be in [{:?}, {:?}], not {:?}",
                    TICK_RANGE.start(),
                    TICK_RANGE.end(),
                    self.tick
                ),
            });
        }
        Ok(())
    }
}

/// What a host that reads pages itself is asked for.
#[derive(Debug, Default)]
struct HostQueue {
    /// Pages not-ready samplers asked for, in the order asked.
    urgent: std::collections::VecDeque<usize>,
}

/// A page a host-driven stream wants: where its stored bytes are in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRequest {
    /// The page, for [`Stream::provide_page`].
    pub page: usize,
    /// File offset of its stored bytes.
    pub offset: u64,
    /// Length of its stored bytes.
    pub len: usize,
}

#[cfg(test)]
thread_local! {
    /// Tests: the segment of the second key, the share and the shares of
    /// every [`Stream::prefetch_keys_share`] on this thread.
    pub(crate) static PREFETCHED: std::cell::RefCell<Vec<(usize, usize, usize)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// What the sampler, the prefetcher and the cache share.
pub(crate) struct Shared {
    source: Box<dyn Source>,
    describe: String,
    index: ContainerIndex,
    /// How the clip's tracks are decoded, built once at open.
    plan: DecodePlan,
    cache: PageCache,
    playheads: playhead::Playheads,
    /// Where each player posts its playhead.
    mailboxes: Mailboxes,
    /// Host-driven I/O: what the playheads and not-ready samplers ask for,
    /// for the host to read ([`Stream::wanted_pages`]); `None` otherwise.
    host: Option<Mutex<HostQueue>>,
    /// Each page's last failed check, until bytes for it pass one. Not a
    /// verdict on the page: every read or delivery is checked afresh (a
    /// host that handed over the wrong bytes, or a file restored after it
    /// was overwritten, recovers with the next), but what a not-ready
    /// sampler is told, and why a previewing one shows the preview.
    failed: Vec<Mutex<Option<ContainerError>>>,
    /// The file's preview tier, checked and resident, if it has one.
    preview: Option<PreviewTier>,
    /// Tests: every load evicts every page as soon as it is installed.
    #[cfg(test)]
    evict_on_install: std::sync::atomic::AtomicBool,
    /// Tests: rounds the prefetch worker has finished (drained its inbox
    /// and done its work), so a test can wait for it by counts.
    #[cfg(test)]
    worker_rounds: AtomicU64,
}

impl Shared {
    /// Page `page`'s last failed check (see `Shared::failed`).
    fn last_failure(&self, page: usize) -> std::sync::MutexGuard<'_, Option<ContainerError>> {
        self.failed[page].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A page check's failure, saying whose bytes failed and that the next
    /// are checked afresh: a host's delivery is not the file's fault.
    fn failed_check(&self, e: ContainerError) -> ContainerError {
        let ContainerError::CorruptPage {
            page,
            offset,
            message,
        } = e
        else {
            return e;
        };
        let whose = match self.host {
            Some(_) => "the bytes provided for it (the next delivery is checked afresh)",
            None => "the bytes read for it (read again when next asked for)",
        };
        ContainerError::CorruptPage {
            page,
            offset,
            message: format!("{whose}: {message}"),
        }
    }

    /// Host-driven streams: the players' latest posts, which the eviction
    /// scorer then goes by too (a worker does both each round instead).
    fn read_posts(&self) -> Vec<Hint> {
        let hints: Vec<Hint> = self.mailboxes.read().into_iter().map(|(h, _)| h).collect();
        self.playheads.set(hints.clone());
        hints
    }

    /// Makes `page` resident and returns it, held for the caller: a sampler
    /// decodes from it however soon another load evicts it. `None` when a
    /// prefetch or an urgent load found no room.
    fn load(
        &self,
        page: usize,
        admission: Admission,
        prefetch: bool,
    ) -> Result<Option<Arc<ResidentPage>>> {
        let urgent = admission == Admission::Urgent;
        let _loading = self.cache.load_lock(page);
        if let Some(resident) = self.cache.get_full(page) {
            if urgent {
                resident.promise(true);
            }
            return Ok(Some(resident));
        }
        let cost = resident_cost(&self.index, &self.plan, page) as u64;
        let playheads = &self.playheads;
        if !self
            .cache
            .admit(&self.index, playheads, page, cost, admission)
        {
            return Ok(None);
        }
        let start = Instant::now();
        let entry = self.index.pages()[page];
        let (offset, len) = (entry.offset, entry.stored_len as usize);
        let read = match prefetch {
            true => self.source.read_prefetch(offset, len),
            false => self.source.read(offset, len),
        };
        self.install_read(page, admission, cost, start, read, prefetch)
    }

    /// Makes `page` resident from bytes the host read: admitted like a load
    /// (`None` when there is no room), then checked and installed.
    fn install_provided(
        &self,
        page: usize,
        admission: Admission,
        data: PageData,
    ) -> Result<Option<Arc<ResidentPage>>> {
        let _loading = self.cache.load_lock(page);
        if let Some(resident) = self.cache.get_full(page) {
            return Ok(Some(resident));
        }
        let cost = resident_cost(&self.index, &self.plan, page) as u64;
        if !self
            .cache
            .admit(&self.index, &self.playheads, page, cost, admission)
        {
            return Ok(None);
        }
        self.install_read(page, admission, cost, Instant::now(), Ok(data), true)
    }

    /// Checks and installs the bytes read for `page`, admitted at `cost`.
    fn install_read(
        &self,
        page: usize,
        admission: Admission,
        cost: u64,
        start: Instant,
        read: std::io::Result<PageData>,
        prefetch: bool,
    ) -> Result<Option<Arc<ResidentPage>>> {
        let urgent = admission == Admission::Urgent;
        let entry = self.index.pages()[page];
        let data = match read {
            Ok(data) => data,
            Err(source) => {
                self.cache.cancel(cost);
                return Err(Error::Io {
                    path: self.describe.clone().into(),
                    source: std::io::Error::new(source.kind(), format!("page {page}: {source}")),
                });
            }
        };
        let counters = &self.cache.counters;
        Counters::add(&counters.bytes_read, entry.stored_len as u64);
        let checked = match ReadyPage::check(&self.index, &self.plan, page, &data) {
            Ok(checked) => checked,
            Err(e) => {
                self.cache.cancel(cost);
                let e = self.failed_check(e);
                tracing::warn!(page, error = %e, "page failed its check");
                *self.last_failure(page) = Some(e.clone());
                return Err(e.into());
            }
        };
        *self.last_failure(page) = None;
        let resident = self
            .cache
            .install(&self.index, page, data, checked, cost, urgent);
        #[cfg(test)]
        if self.evict_on_install.load(Ordering::Relaxed) {
            // Another thread's load evicting the page at once.
            self.cache.clear();
        }
        Counters::add(&counters.page_loads, 1);
        if prefetch {
            Counters::add(&counters.prefetch_loads, 1);
        }
        tracing::debug!(
            page,
            bytes = entry.stored_len,
            resident = cost,
            ms = start.elapsed().as_secs_f64() * 1e3,
            cause = match admission {
                Admission::Demand => "demand",
                Admission::Urgent => "not ready",
                Admission::Prefetch(_) => "prefetch",
            },
            "page load"
        );
        Ok(Some(resident))
    }
}

/// An open container streamed from a [`Source`]: metadata in memory, pages
/// resident on demand and ahead of the playheads, within a budget.
///
/// `Send + Sync`: any number of threads may sample one stream, and every
/// player of the stream shares its cache.
///
/// A `Stream` is a handle: cloning it is cheap and every clone is the same
/// stream (one cache, one prefetch thread). The prefetch thread stops when
/// the last clone, or the last [`Player`](crate::play::Player) holding one,
/// is dropped.
#[derive(Clone)]
pub struct Stream {
    inner: Arc<StreamInner>,
}

/// What the handles of one stream share.
struct StreamInner {
    shared: Arc<Shared>,
    options: StreamOptions,
    prefetcher: Option<Prefetcher>,
    next_player: AtomicU64,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("source", &self.inner.shared.describe)
            .field("pages", &self.inner.shared.index.pages().len())
            .field("options", &self.inner.options)
            .finish()
    }
}

impl Stream {
    /// Opens a container file, read with positioned reads ([`FileSource`]).
    ///
    /// A change to the file after open is harmless or an error: every page
    /// is copied into memory the stream owns when it is loaded, and its
    /// checksum is checked on that copy, so poses come only from checked
    /// bytes that nothing outside can change. A resident page keeps giving
    /// its poses whatever happens to the file; a page loaded after the file
    /// was overwritten fails its checksum ([`Error::Container`], naming the
    /// page), and one loaded after it was truncated fails with
    /// [`Error::Io`] naming the page and the file's length. For zero-copy
    /// reads of a file nothing writes to, open a [`MappedSource`] with
    /// [`Stream::open`] (its contract: the file must not change while
    /// mapped).
    ///
    /// [`MissingPage::NotReady`] and [`MissingPage::Preview`] need the
    /// prefetch thread here: without it nothing would ever load a missing
    /// page (only [`Stream::preload`]), so those settings are refused.
    pub fn open_file(path: &Path, options: StreamOptions) -> Result<Stream> {
        if options.missing_page != MissingPage::Block && !options.prefetch {
            return Err(Error::InvalidSettings {
                message: format!(
                    "missing_page {:?} with prefetch off: a stream over a file would never load \
                     a missing page; turn prefetch on, use missing_page Block, or read the \
                     pages yourself through Stream::open_host",
                    options.missing_page
                ),
            });
        }
        Stream::open(FileSource::open(path)?, options)
    }

    /// Opens a container held in memory. The stream owns the bytes and
    /// nothing can change them.
    ///
    /// # Example
    ///
    /// ```
    /// use cinestream::stream::{Stream, StreamOptions};
    /// use cinestream::{Sampling, Transform};
    ///
    /// let bytes = include_bytes!("../../tests/data/golden/v1-clamp.cine").to_vec();
    /// let stream = Stream::from_bytes(bytes, StreamOptions::default().with_budget_bytes(1 << 20))?;
    /// let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    /// stream.sample(0.5, &mut pose)?; // loads the page (a stall) or finds it resident
    /// let hand = stream.sample_bone(1, 0.5)?;
    /// assert_eq!(hand, pose[1]);
    /// # Ok::<(), cinestream::Error>(())
    /// ```
    pub fn from_bytes(bytes: Vec<u8>, options: StreamOptions) -> Result<Stream> {
        Stream::open(MemorySource::new(bytes), options)
    }

    /// Opens a container over `source`: reads the header and the table of
    /// contents (two reads), checks them, and starts the prefetcher.
    ///
    /// Every page's checksum is checked on the bytes `source` returns for
    /// it, and poses are decoded from those bytes, so the guarantee against
    /// a file changed while open is the source's: none is needed for
    /// [`FileSource`] and [`MemorySource`] (they return bytes nothing else
    /// can change), while [`MappedSource`] returns the mapped bytes
    /// themselves and requires the file not to change while mapped (see its
    /// contract).
    pub fn open(source: impl Source, options: StreamOptions) -> Result<Stream> {
        Stream::open_with(source, options, false)
    }

    /// Opens a container whose pages the host reads itself (its own job
    /// system or asset loader) instead of a prefetch thread: `prefix` is
    /// the file's first [`Header::pages_offset`] bytes (its header,
    /// metadata and seek index; the first [`HEADER_LEN`] bytes say how
    /// many) and `file_len` the file's length. The stream then says which
    /// pages it wants, most needed first ([`Stream::wanted_pages`]), and the
    /// host hands each over when read ([`Stream::provide_page`]).
    ///
    /// A page not yet provided is not ready: the stream must be opened with
    /// [`MissingPage::NotReady`], and a sampler that asks for such a page
    /// puts it first among the wanted ones.
    ///
    /// # Example
    ///
    /// The host's loop: read what the stream wants, hand it over, sample.
    ///
    /// ```
    /// use cinestream::container::{Header, HEADER_LEN};
    /// use cinestream::stream::{MissingPage, Stream, StreamOptions};
    /// use cinestream::{Sampling, Transform};
    ///
    /// // The host's file, read however the engine reads files.
    /// let file: &[u8] = include_bytes!("../../tests/data/golden/v1-clamp.cine");
    /// let header = Header::parse(&file[..HEADER_LEN], file.len() as u64)?;
    /// let prefix = file[..header.pages_offset as usize].to_vec();
    /// let options = StreamOptions::default().with_missing_page(MissingPage::NotReady);
    /// let stream = Stream::open_host(prefix, file.len() as u64, options)?;
    ///
    /// let mut pose = vec![Transform::IDENTITY; stream.meta().num_bones()];
    /// // Not resident yet: the stream says so and wants the page first.
    /// assert!(stream.sample(0.5, &mut pose).is_err());
    /// for request in stream.wanted_pages(4) {
    ///     let start = request.offset as usize;
    ///     stream.provide_page(request.page, file[start..start + request.len].to_vec())?;
    /// }
    /// stream.sample(0.5, &mut pose)?;
    /// # Ok::<(), cinestream::Error>(())
    /// ```
    pub fn open_host(prefix: Vec<u8>, file_len: u64, options: StreamOptions) -> Result<Stream> {
        if options.missing_page == MissingPage::Block {
            return Err(Error::InvalidSettings {
                message: "a stream whose pages the host provides needs MissingPage::NotReady \
                          or MissingPage::Preview: it cannot read a missing page itself"
                    .into(),
            });
        }
        let options = options.with_prefetch(false);
        Stream::open_with(HostPrefix { prefix, file_len }, options, true)
    }

    fn open_with(source: impl Source, options: StreamOptions, host: bool) -> Result<Stream> {
        options.check()?;
        let describe = source.describe();
        let _span = tracing::debug_span!("stream_open", source = %describe).entered();
        let io = |source| Error::Io {
            path: describe.clone().into(),
            source,
        };
        let len = source.len();
        let head = source.read(0, HEADER_LEN.min(len as usize)).map_err(io)?;
        let header = Header::parse(&head, len)?;
        // The table of contents, one checked section at a time (nothing
        // the header claims is read or allocated before it is bounded),
        // kept whole for the preview tier.
        let mut prefix = Vec::new();
        // The header alone: the sections after it come from `read` below
        // (a version-6 header is shorter than the bytes read for it).
        try_extend(&mut prefix, &head[..header.header_len()], "the header").map_err(io)?;
        let skeleton = options.skeleton.as_ref();
        let index = ContainerIndex::read(&header, skeleton, |range| -> Result<PageData> {
            let bytes = source
                .read(range.start, (range.end - range.start) as usize)
                .map_err(io)?;
            try_extend(&mut prefix, &bytes, "the table of contents").map_err(io)?;
            Ok(bytes)
        })?;
        let preview = PreviewTier::parse(&index, &prefix)?;
        if options.missing_page == MissingPage::Preview && preview.is_none() {
            return Err(Error::InvalidSettings {
                message: format!(
                    "the missing-page policy Preview needs a file with a preview tier, and {describe} has none (pack it with --preview-cm)"
                ),
            });
        }
        let plan = DecodePlan::new(index.meta());
        let largest = (0..index.pages().len())
            .map(|p| resident_cost(&index, &plan, p) as u64)
            .max()
            .unwrap_or(0);
        if options.budget_bytes < 2 * largest {
            return Err(Error::InvalidSettings {
                message: format!(
                    "a budget of {} bytes cannot hold two pages of this stream ({largest} bytes each at most)",
                    options.budget_bytes
                ),
            });
        }
        let counters = Arc::new(Counters::default());
        Counters::add(&counters.bytes_read, prefix.len() as u64);
        drop((head, prefix));
        tracing::debug!(
            clip = index.meta().name,
            samples = index.meta().num_samples(),
            pages = index.pages().len(),
            "opened stream"
        );
        let shared = Arc::new(Shared {
            source: Box::new(source),
            describe,
            cache: PageCache::new(&index, options.budget_bytes, counters),
            failed: index.pages().iter().map(|_| Mutex::new(None)).collect(),
            preview,
            index,
            plan,
            playheads: Default::default(),
            mailboxes: Default::default(),
            host: host.then(Default::default),
            #[cfg(test)]
            evict_on_install: Default::default(),
            #[cfg(test)]
            worker_rounds: Default::default(),
        });
        let prefetcher = match options.prefetch {
            true => Some(Prefetcher::spawn(
                Arc::clone(&shared),
                options.lookahead_seconds,
                options.tick,
            )?),
            false => None,
        };
        Ok(Stream {
            inner: Arc::new(StreamInner {
                shared,
                options,
                prefetcher,
                next_player: AtomicU64::new(0),
            }),
        })
    }

    /// The clip metadata.
    pub fn meta(&self) -> &ClipMeta {
        self.inner.shared.index.meta()
    }

    /// The table of contents.
    pub fn index(&self) -> &ContainerIndex {
        &self.inner.shared.index
    }

    /// Bytes page `page` occupies when resident: its decoded bytes and its
    /// decode tables, what the budget counts.
    pub fn resident_cost(&self, page: usize) -> usize {
        resident_cost(&self.inner.shared.index, &self.inner.shared.plan, page)
    }

    /// The options it was opened with.
    pub fn options(&self) -> &StreamOptions {
        &self.inner.options
    }

    /// The cache counters now.
    pub fn stats(&self) -> StreamStats {
        self.inner.shared.cache.counters.snapshot()
    }

    /// Zeroes the event counters (the peak restarts from what is resident).
    pub fn reset_stats(&self) {
        self.inner.shared.cache.counters.reset();
    }

    /// True when `page` is resident.
    pub fn is_resident(&self, page: usize) -> bool {
        page < self.inner.shared.index.pages().len() && self.inner.shared.cache.is_resident(page)
    }

    /// The pages resident now.
    pub fn resident_pages(&self) -> Vec<usize> {
        self.inner.shared.cache.resident_pages()
    }

    /// Evicts every page.
    pub fn evict_all(&self) {
        self.inner.shared.cache.clear();
    }

    /// Loads the pages holding the keys around `time` and waits, without
    /// counting a stall: what an engine does before a cutscene starts.
    pub fn preload(&self, time: f64) -> Result<()> {
        let keys = sample::locate(self.meta(), time, SampleRounding::None);
        for sample in [keys.a, keys.b] {
            let page = self.inner.shared.index.page_of_sample(sample);
            self.inner.shared.load(page, Admission::Demand, false)?;
        }
        Ok(())
    }

    /// Loads every page, first to last, as far as the budget holds them
    /// without evicting; returns how many are resident.
    pub fn preload_all(&self) -> Result<usize> {
        for page in 0..self.inner.shared.index.pages().len() {
            if self
                .inner
                .shared
                .load(page, Admission::Prefetch(0), false)?
                .is_none()
            {
                break;
            }
        }
        Ok(self.resident_pages().len())
    }

    /// Errors the prefetcher met since the last call (each page's once).
    pub fn prefetch_errors(&self) -> Vec<Error> {
        self.inner
            .prefetcher
            .as_ref()
            .map_or_else(Vec::new, Prefetcher::take_errors)
    }

    /// True while the prefetch thread runs.
    pub fn prefetcher_running(&self) -> bool {
        self.inner
            .prefetcher
            .as_ref()
            .is_some_and(Prefetcher::is_running)
    }

    /// A new player's id and its mailbox, where it posts its playhead
    /// for the prefetcher (or a host's [`Stream::wanted_pages`]) to read.
    pub(crate) fn join(&self) -> (u64, Arc<Mailbox>) {
        let player = self.inner.next_player.fetch_add(1, Ordering::Relaxed);
        let mailbox = Arc::new(Mailbox::new(player));
        self.inner.shared.mailboxes.open(Arc::clone(&mailbox));
        if let Some(p) = &self.inner.prefetcher {
            // An idle worker sleeps until asked for something.
            p.send(Request::Join);
        }
        (player, mailbox)
    }

    /// Asks for every cache line a decode of `keys` will read, if their
    /// pages are resident: what [`Sampling::warm`] does, from the segment
    /// directory in one step instead of along the chain of loads that
    /// leads to a segment (see the `directory` module). A player does this
    /// first on a seek, and a frame before it enters a segment.
    #[inline]
    pub(crate) fn prefetch_keys(&self, keys: KeyPair) {
        self.prefetch_keys_share(keys, 0, 1);
    }

    /// Share `share` of `shares` of what [`Stream::prefetch_keys`] asks
    /// for (see `SegmentDirectory::prefetch_share`).
    pub(crate) fn prefetch_keys_share(&self, keys: KeyPair, share: usize, shares: usize) {
        let meta = self.meta();
        #[cfg(test)]
        PREFETCHED.with(|log| {
            let segment = meta.segments.locate(keys.b).0;
            log.borrow_mut().push((segment, share, shares));
        });
        let directory = &self.inner.shared.cache.directory;
        let (segment_a, local_a) = meta.segments.locate(keys.a);
        let (segment_b, local_b) = meta.segments.locate(keys.b);
        if segment_a == segment_b {
            let (first, last) = (local_a.min(local_b), local_a.max(local_b));
            directory.prefetch_share(segment_a, first, last, share, shares);
        } else {
            directory.prefetch_share(segment_a, local_a, local_a, share, shares);
            directory.prefetch_share(segment_b, local_b, local_b, share, shares);
        }
    }

    /// Tells the prefetcher a player is gone.
    pub(crate) fn leave(&self, player: u64) {
        self.inner.shared.mailboxes.close(player);
        if let Some(p) = &self.inner.prefetcher {
            p.send(Request::Leave(player));
        } else if self.inner.shared.host.is_some() {
            self.inner.shared.read_posts();
        }
    }

    /// Host-driven I/O ([`Stream::open_host`]): the pages the stream wants
    /// next, at most `max`, most needed first: those not-ready samplers
    /// asked for, in the order asked, then those the playheads reach within
    /// the lookahead, soonest first. Resident pages are left out. Empty for
    /// a stream that reads its own pages.
    pub fn wanted_pages(&self, max: usize) -> Vec<PageRequest> {
        let shared = &self.inner.shared;
        let Some(host) = &shared.host else {
            return Vec::new();
        };
        let urgent = host
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .urgent
            .clone();
        let hints = shared.read_posts();
        let plan = Scorer::new(&shared.index, hints).plan(self.inner.options.lookahead_seconds);
        let mut wanted: Vec<PageRequest> = Vec::new();
        let candidates = urgent
            .into_iter()
            .chain(plan.into_iter().map(|(page, _)| page));
        for page in candidates {
            if wanted.len() >= max {
                break;
            }
            // A page whose last bytes failed their check is asked for
            // again: the next delivery may be the right one.
            let resident = shared.cache.is_resident(page);
            if resident || wanted.iter().any(|w| w.page == page) {
                continue;
            }
            let entry = shared.index.pages()[page];
            wanted.push(PageRequest {
                page,
                offset: entry.offset,
                len: entry.stored_len as usize,
            });
        }
        wanted
    }

    /// Host-driven I/O: hands over the stored bytes of `page` the host read
    /// (at the offset and length [`Stream::wanted_pages`] gave). They are
    /// checked like any page (length, checksum, lz4, every segment) and kept
    /// within the budget: `Ok(false)` when there is no room for them now (a
    /// page the playheads need sooner holds it). A page a not-ready sampler
    /// asked for is always taken, as the prefetch thread takes it.
    pub fn provide_page(&self, page: usize, bytes: Vec<u8>) -> Result<bool> {
        let shared = &self.inner.shared;
        let Some(host) = &shared.host else {
            return Err(Error::InvalidSettings {
                message:
                    "provide_page: this stream reads its own pages (open it with Stream::open_host)"
                        .into(),
            });
        };
        let pages = shared.index.pages().len();
        if page >= pages {
            return Err(Error::InvalidSettings {
                message: format!(
                    "provide_page: page {page} does not exist: the stream has {pages}"
                ),
            });
        }
        let urgent = {
            let mut host = host.lock().unwrap_or_else(|e| e.into_inner());
            match host.urgent.iter().position(|&p| p == page) {
                Some(i) => {
                    host.urgent.remove(i);
                    true
                }
                None => false,
            }
        };
        // The eviction scorer goes by where the playheads are now.
        shared.read_posts();
        let admission = match urgent {
            true => Admission::Urgent,
            false => Admission::Prefetch(shared.playheads.scorer(&shared.index).score(page)),
        };
        let loaded = shared.install_provided(page, admission, PageData::owned(bytes));
        if urgent && !matches!(loaded, Ok(Some(_))) {
            // Still wanted, also when these bytes failed their check (the
            // next may be the right ones): keep it first in line.
            let mut host = host.lock().unwrap_or_else(|e| e.into_inner());
            if !host.urgent.contains(&page) {
                host.urgent.push_front(page);
            }
        }
        Ok(loaded?.is_some())
    }

    /// The resident page `page`, loading it by the missing-page policy.
    #[inline]
    fn pin(&self, page: usize) -> Result<Guard<Option<Arc<ResidentPage>>>> {
        let resident = self.inner.shared.cache.get(page);
        if let Some(held) = &*resident {
            held.served();
            Counters::add(&self.inner.shared.cache.counters.hits, 1);
            return Ok(resident);
        }
        self.miss(page)
    }

    #[cold]
    #[inline(never)]
    fn miss(&self, page: usize) -> Result<Guard<Option<Arc<ResidentPage>>>> {
        let counters = &self.inner.shared.cache.counters;
        Counters::add(&counters.misses, 1);
        if self.inner.options.missing_page != MissingPage::Block {
            // Asked for again whether or not its last bytes failed: each
            // miss is one more try, never a loop of them.
            let failed = self.inner.shared.last_failure(page).clone();
            if let Some(p) = &self.inner.prefetcher {
                p.send(match self.inner.options.missing_page {
                    MissingPage::Preview => Request::Preview(page),
                    _ => Request::Load(page),
                });
            } else if let Some(host) = &self.inner.shared.host {
                let mut host = host.lock().unwrap_or_else(|e| e.into_inner());
                if !host.urgent.contains(&page) {
                    host.urgent.push_back(page);
                }
            }
            return match (failed, self.inner.options.missing_page) {
                // A previewing sampler shows the preview while the page's
                // bytes are bad, as while they are on their way.
                (Some(e), MissingPage::NotReady) => Err(e.into()),
                _ => {
                    if self.inner.options.missing_page == MissingPage::NotReady {
                        Counters::add(&counters.not_ready, 1);
                    }
                    Err(Error::PageNotReady { page })
                }
            };
        }
        let start = Instant::now();
        // The load hands back the page it made resident, held: another
        // thread's load may evict it from the cache at once, but not from
        // under this decode.
        let Some(resident) = self.inner.shared.load(page, Admission::Demand, false)? else {
            return Err(Error::Internal {
                message: format!("a demand load of page {page} was refused room"),
            });
        };
        resident.served();
        let waited = start.elapsed();
        Counters::add(&counters.stalls, 1);
        Counters::add(&counters.stall_ns, waited.as_nanos() as u64);
        tracing::debug!(page, ms = waited.as_secs_f64() * 1e3, "stall");
        Ok(Guard::from_inner(Some(resident)))
    }
}

/// A segment of a resident page, held so the page outlives the decode.
/// Letting go of it brings a cache that blocking loads took over its
/// budget back within it (the cache evicts its excess).
pub struct PinnedSegment<'a> {
    page: Guard<Option<Arc<ResidentPage>>>,
    shared: &'a Shared,
    segment: usize,
}

impl Drop for PinnedSegment<'_> {
    #[inline]
    fn drop(&mut self) {
        let cache = &self.shared.cache;
        if cache.over_budget() {
            cache.trim(&self.shared.index, &self.shared.playheads);
        }
    }
}

impl SegmentHandle for PinnedSegment<'_> {
    #[inline(always)]
    fn get(&self) -> SegmentRef<'_> {
        match &*self.page {
            Some(page) => page.segment(&self.shared.index, self.segment),
            // Not built without a page; an empty segment fails the sampler's
            // length check rather than panicking.
            None => SegmentRef::EMPTY,
        }
    }
}

impl Stream {
    /// The file's preview tier, resident since open, if it has one.
    pub fn preview(&self) -> Option<&PreviewTier> {
        self.inner.shared.preview.as_ref()
    }

    /// `full`, or when it found a page missing under
    /// [`MissingPage::Preview`], `preview` from the preview tier.
    #[inline]
    fn or_preview<T>(
        &self,
        full: Result<T>,
        preview: impl FnOnce(&PreviewTier) -> Result<T>,
    ) -> Result<(T, Quality)> {
        match full {
            Ok(value) => Ok((value, Quality::Full)),
            Err(Error::PageNotReady { page })
                if self.inner.options.missing_page == MissingPage::Preview =>
            {
                // Open refuses the policy on a file without a tier.
                let Some(tier) = &self.inner.shared.preview else {
                    return Err(Error::PageNotReady { page });
                };
                Counters::add(&self.inner.shared.cache.counters.previews, 1);
                let quality = Quality::Preview {
                    bound_cm: tier.bound_cm(),
                    float_bound: tier.float_bound(),
                };
                Ok((preview(tier)?, quality))
            }
            Err(e) => Err(e),
        }
    }

    /// The pose and float values between two located keys, from the pages
    /// or (by the policy) the preview tier: what a player shows.
    pub(crate) fn sample_keys(
        &self,
        keys: KeyPair,
        pose: &mut [Transform],
        floats: &mut [f32],
    ) -> Result<Quality> {
        let meta = self.meta();
        let full =
            sample::decode_keys_and_floats(meta, self.decode_plan(), self, keys, pose, floats);
        Ok(self
            .or_preview(full, |tier| tier.decode(keys, pose, floats))?
            .1)
    }

    /// [`Sampling::sample_bone`], and whether the bone came from the
    /// preview tier.
    pub fn sample_bone_quality(&self, bone: usize, time: f64) -> Result<(Transform, Quality)> {
        let meta = self.meta();
        let keys = sample::locate(meta, time, SampleRounding::None);
        let full = sample::sample_bone_keys(meta, self.decode_plan(), self, bone, keys);
        self.or_preview(full, |tier| tier.bone(bone, keys))
    }

    /// When page `page` became resident, if it is: how long a preview
    /// waited for it, measured by the harness.
    pub fn resident_since(&self, page: usize) -> Option<Instant> {
        let resident = self.inner.shared.cache.get(page);
        resident.as_ref().map(|p| p.installed())
    }

    /// The quality a pose at `time` would have now: full when the pages of
    /// its keys are resident (or the policy waits for them), a preview
    /// when the policy is [`MissingPage::Preview`] and they are not.
    pub fn quality_at(&self, time: f64) -> Quality {
        let meta = self.meta();
        let keys = sample::locate(meta, time, SampleRounding::None);
        let resident = |sample: usize| self.is_resident(self.index().page_of_sample(sample));
        match (&self.inner.shared.preview, self.inner.options.missing_page) {
            (Some(tier), MissingPage::Preview) if !(resident(keys.a) && resident(keys.b)) => {
                Quality::Preview {
                    bound_cm: tier.bound_cm(),
                    float_bound: tier.float_bound(),
                }
            }
            _ => Quality::Full,
        }
    }
}

/// A stream samples from its resident pages and answers a missing page by
/// its [`MissingPage`] policy; under [`MissingPage::Preview`] every call
/// answers from the preview tier instead, and the pose calls say so.
impl Sampling for Stream {
    fn clip_meta(&self) -> &ClipMeta {
        self.inner.shared.index.meta()
    }

    fn sample_rounded(
        &self,
        time: f64,
        rounding: SampleRounding,
        pose: &mut [Transform],
    ) -> Result<Quality> {
        let meta = self.meta();
        let keys = sample::locate(meta, time, rounding);
        let full = sample::decode_keys(meta, self.decode_plan(), self, keys, pose);
        Ok(self
            .or_preview(full, |tier| tier.decode(keys, pose, &mut []))?
            .1)
    }

    fn sample_into<W: PoseWriter + ?Sized>(&self, time: f64, writer: &mut W) -> Result<Quality> {
        let meta = self.meta();
        let keys = sample::locate(meta, time, SampleRounding::None);
        let full = sample::decode_keys_into(meta, self.decode_plan(), self, keys, writer);
        Ok(self
            .or_preview(full, |tier| tier.decode_into(keys, writer))?
            .1)
    }

    /// Under [`MissingPage::Preview`], the bone may come from the preview
    /// tier; [`Stream::sample_bone_quality`] says which.
    fn sample_bone(&self, bone: usize, time: f64) -> Result<Transform> {
        Ok(self.sample_bone_quality(bone, time)?.0)
    }

    /// Under [`MissingPage::Preview`], the values may come from the preview
    /// tier; [`Stream::quality_at`] says which.
    fn sample_float(&self, track: usize, time: f64) -> Result<[f32; 4]> {
        let meta = self.meta();
        let keys = sample::locate(meta, time, SampleRounding::None);
        let full = sample::sample_float_keys(meta, self.decode_plan(), self, track, keys);
        Ok(self.or_preview(full, |tier| tier.float(track, keys))?.0)
    }

    fn decode_sample(&self, index: usize, pose: &mut [Transform]) -> Result<Quality> {
        let index = index.min(self.meta().num_samples() - 1);
        let keys = KeyPair {
            a: index,
            b: index,
            alpha: 0.0,
        };
        let full = sample::decode_keys(self.meta(), self.decode_plan(), self, keys, pose);
        Ok(self
            .or_preview(full, |tier| tier.decode(keys, pose, &mut []))?
            .1)
    }
}

impl SegmentSource for Stream {
    fn decode_plan(&self) -> &DecodePlan {
        &self.inner.shared.plan
    }

    type Error = Error;
    type Segment<'a> = PinnedSegment<'a>;

    #[inline]
    fn segment(&self, segment: usize) -> Result<PinnedSegment<'_>> {
        let index = &self.inner.shared.index;
        Ok(PinnedSegment {
            page: self.pin(index.page_of(segment))?,
            shared: &self.inner.shared,
            segment,
        })
    }

    /// The segment if its page is resident, without counting a hit or a miss.
    fn resident_segment(&self, segment: usize) -> Option<PinnedSegment<'_>> {
        let index = &self.inner.shared.index;
        let page = self.inner.shared.cache.get(index.page_of(segment));
        page.is_some().then_some(PinnedSegment {
            page,
            shared: &self.inner.shared,
            segment,
        })
    }
}

#[cfg(test)]
#[cfg(feature = "pipeline")]
pub(crate) mod tests;
