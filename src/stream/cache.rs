//! Page residency: which pages of a stream are in memory, under a budget,
//! and the counters that say how well that went.
//!
//! A resident page is its bytes (read into its slot, lz4-decoded into it,
//! or, from a [`MappedSource`](super::MappedSource), mapped and touched)
//! plus the decode tables built as it was checked. Slots are swapped
//! atomically ([`ArcSwapOption`]), so a sampler finds a resident page
//! without a lock; loads take a per-page lock so a page is read once however
//! many threads want it. Memory is accounted when a load is admitted and
//! given back when the last holder of an evicted page lets go, so the
//! resident count is memory that is really held. Eviction takes the page
//! every playhead will reach last: pages behind a clamped playhead first,
//! then the farthest ahead; only a blocking sampler's load evicts a page
//! promised to a sampler that was told "not ready" and has not had it yet.
//! A load hands its page to the loader held, so a sampler decodes from the
//! page it loaded even if another load evicted it at once. A blocking load
//! that found every page in use goes over the budget; the sampler that
//! lets go of a page while the cache is over it evicts the excess.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;

use super::directory::SegmentDirectory;
use super::playhead::{Playheads, Score};
use crate::container::byte_source::PageData;
use crate::container::read::ReadyPage;
use crate::container::ContainerIndex;
use crate::sample::tables::RunTables;
use crate::sample::SegmentRef;

/// Counters of a stream's page cache, as a snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Segment lookups that found their page resident.
    pub hits: u64,
    /// Segment lookups that did not.
    pub misses: u64,
    /// Misses that made a sampler wait for a load.
    pub stalls: u64,
    /// Total time samplers waited, in nanoseconds.
    pub stall_ns: u64,
    /// Misses answered "not ready" (non-blocking mode).
    pub not_ready: u64,
    /// Sampling calls answered from the preview tier (preview mode).
    pub previews: u64,
    /// Bytes read from the source (table of contents and pages).
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

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub stalls: AtomicU64,
    pub stall_ns: AtomicU64,
    pub not_ready: AtomicU64,
    pub previews: AtomicU64,
    pub bytes_read: AtomicU64,
    pub page_loads: AtomicU64,
    pub prefetch_loads: AtomicU64,
    pub evictions: AtomicU64,
    pub resident_bytes: AtomicU64,
    pub peak_resident_bytes: AtomicU64,
}

impl Counters {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> StreamStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StreamStats {
            hits: get(&self.hits),
            misses: get(&self.misses),
            stalls: get(&self.stalls),
            stall_ns: get(&self.stall_ns),
            not_ready: get(&self.not_ready),
            previews: get(&self.previews),
            bytes_read: get(&self.bytes_read),
            page_loads: get(&self.page_loads),
            prefetch_loads: get(&self.prefetch_loads),
            evictions: get(&self.evictions),
            resident_bytes: get(&self.resident_bytes),
            peak_resident_bytes: get(&self.peak_resident_bytes),
        }
    }

    /// Zeroes the event counters; the peak restarts from what is resident now.
    pub fn reset(&self) {
        for c in [
            &self.hits,
            &self.misses,
            &self.stalls,
            &self.stall_ns,
            &self.not_ready,
            &self.previews,
            &self.bytes_read,
            &self.page_loads,
            &self.prefetch_loads,
            &self.evictions,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        self.peak_resident_bytes.store(
            self.resident_bytes.load(Ordering::Relaxed),
            Ordering::Relaxed,
        );
    }
}

/// A page in memory: its bytes and decode tables. Dropping the last holder
/// gives its memory back to the count (and a mapped range back to the OS).
#[derive(Debug)]
pub(crate) struct ResidentPage {
    data: PageData,
    decoded: Option<Vec<u8>>,
    tables: RunTables,
    cost: u64,
    /// Load order, to break ties between equally wanted pages (oldest goes).
    loaded_at: u64,
    /// When it became resident.
    installed: std::time::Instant,
    /// Loaded (or kept) for a sampler that was told "not ready" and has not
    /// had it since: no prefetch or urgent load evicts it until a sampler
    /// gets it (or the prefetcher gives up waiting, see `prefetch`).
    promised: AtomicBool,
    counters: Arc<Counters>,
}

impl ResidentPage {
    /// When the page became resident.
    pub fn installed(&self) -> std::time::Instant {
        self.installed
    }

    /// A sampler got the page: its promise, if any, is kept.
    #[inline]
    pub fn served(&self) {
        if self.promised.load(Ordering::Relaxed) {
            self.promised.store(false, Ordering::Relaxed);
        }
    }

    /// Keeps the page for a sampler that asked for it (or stops keeping it).
    pub fn promise(&self, promised: bool) {
        self.promised.store(promised, Ordering::Relaxed);
    }

    /// True while promised to a sampler that has not had it yet.
    pub fn is_promised(&self) -> bool {
        self.promised.load(Ordering::Relaxed)
    }

    #[inline]
    pub fn segment<'a>(&'a self, index: &ContainerIndex, segment: usize) -> SegmentRef<'a> {
        let bytes = self.decoded.as_deref().unwrap_or(&self.data);
        self.tables
            .segment(segment, index.segment_bytes_onward(segment, bytes))
    }
}

impl Drop for ResidentPage {
    fn drop(&mut self) {
        self.counters
            .resident_bytes
            .fetch_sub(self.cost, Ordering::Relaxed);
        self.data.release();
    }
}

/// Who asked for a load, which decides how it may make room.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Admission {
    /// A sampler needs it now and waits: evict whatever is wanted least, and
    /// go over budget rather than fail if everything else is in use.
    Demand,
    /// A sampler was told "not ready" and asks again next frame: evict
    /// whatever is wanted least except pages promised to other such
    /// samplers, and skip the load (to try again) when there is nothing
    /// else. The page is promised to the sampler until it gets it.
    Urgent,
    /// The prefetcher wants it with this score: evict only pages wanted
    /// less and not promised, and skip the load when there are none.
    Prefetch(Score),
}

/// The resident pages of one stream.
pub(crate) struct PageCache {
    slots: Vec<ArcSwapOption<ResidentPage>>,
    /// Held while a page loads, so that it loads once.
    load_locks: Vec<Mutex<()>>,
    /// Held while deciding what to evict, so that two loads do not both
    /// count on the same free bytes.
    admission: Mutex<u64>,
    budget: u64,
    pub counters: Arc<Counters>,
    /// Where each resident segment's tables and keys are, for prefetches.
    pub directory: SegmentDirectory,
}

impl PageCache {
    pub fn new(index: &ContainerIndex, budget: u64, counters: Arc<Counters>) -> PageCache {
        let pages = index.pages().len();
        PageCache {
            slots: (0..pages).map(|_| ArcSwapOption::empty()).collect(),
            load_locks: (0..pages).map(|_| Mutex::new(())).collect(),
            admission: Mutex::new(0),
            budget,
            counters,
            directory: SegmentDirectory::new(index),
        }
    }

    /// Empties slot `page`; true when a page was there.
    fn evict(&self, page: usize) -> Option<Arc<ResidentPage>> {
        let evicted = self.slots[page].swap(None);
        if evicted.is_some() {
            self.directory.forget(page);
        }
        evicted
    }

    /// The page if resident, without a lock.
    #[inline]
    pub fn get(&self, page: usize) -> arc_swap::Guard<Option<Arc<ResidentPage>>> {
        self.slots[page].load()
    }

    /// The page if resident, as a reference of the caller's own.
    pub fn get_full(&self, page: usize) -> Option<Arc<ResidentPage>> {
        self.slots[page].load_full()
    }

    pub fn is_resident(&self, page: usize) -> bool {
        self.slots[page].load().is_some()
    }

    pub fn load_lock(&self, page: usize) -> std::sync::MutexGuard<'_, ()> {
        // A poisoned lock means a load panicked; the slot is still consistent.
        self.load_locks[page]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Makes room for `cost` bytes of `page` and reserves them. False when a
    /// prefetch finds nothing it may evict.
    pub fn admit(
        &self,
        index: &ContainerIndex,
        playheads: &Playheads,
        page: usize,
        cost: u64,
        admission: Admission,
    ) -> bool {
        let _decide = self.admission.lock().unwrap_or_else(|e| e.into_inner());
        let resident = || self.counters.resident_bytes.load(Ordering::Relaxed);
        let mut candidates: Option<Vec<(Score, u64, usize)>> = None;
        while resident() + cost > self.budget {
            let list = candidates.get_or_insert_with(|| {
                let wanted = playheads.scorer(index);
                let mut list: Vec<_> = (0..self.slots.len())
                    .filter(|&p| p != page)
                    .filter_map(|p| {
                        let slot = self.slots[p].load();
                        let keep = admission != Admission::Demand;
                        slot.as_ref()
                            .filter(|r| !(keep && r.is_promised()))
                            .map(|r| (wanted.score(p), r.loaded_at, p))
                    })
                    .collect();
                // Least wanted last, so `pop` takes it; among equals the oldest.
                list.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
                list
            });
            let Some(&(score, _, victim)) = list.last() else {
                // Nothing left to evict: what is resident is in use. A
                // sampler's load goes over budget (and the peak says so)
                // rather than fail; a prefetch waits.
                match admission {
                    Admission::Demand => break,
                    Admission::Urgent | Admission::Prefetch(_) => return false,
                }
            };
            if let Admission::Prefetch(wanted) = admission {
                if score <= wanted {
                    return false;
                }
            }
            list.pop();
            if self.evict(victim).is_some() {
                Counters::add(&self.counters.evictions, 1);
                tracing::debug!(page = victim, for_page = page, "evict");
            }
            // Memory comes back when the last holder drops the page, which
            // may be later than this if a sampler is decoding it right now.
        }
        let now = self
            .counters
            .resident_bytes
            .fetch_add(cost, Ordering::Relaxed)
            + cost;
        self.counters
            .peak_resident_bytes
            .fetch_max(now, Ordering::Relaxed);
        true
    }

    /// True while more bytes are resident than the budget: a blocking load
    /// went over it while every page was in use (see [`PageCache::trim`]).
    #[inline]
    pub fn over_budget(&self) -> bool {
        self.counters.resident_bytes.load(Ordering::Relaxed) > self.budget
    }

    /// Brings the cache back within its budget once the samplers that took
    /// it over let go: evicts the pages wanted least (never one promised to
    /// a "not ready" sampler) until the bytes evicted cover the excess.
    /// Pages still held give their memory back when their holders let go;
    /// what no sampler holds goes at once.
    pub fn trim(&self, index: &ContainerIndex, playheads: &Playheads) {
        let _decide = self.admission.lock().unwrap_or_else(|e| e.into_inner());
        let resident = self.counters.resident_bytes.load(Ordering::Relaxed);
        let Some(mut excess) = resident.checked_sub(self.budget).filter(|&e| e > 0) else {
            return;
        };
        let wanted = playheads.scorer(index);
        let mut list: Vec<_> = (0..self.slots.len())
            .filter_map(|p| {
                let slot = self.slots[p].load();
                slot.as_ref()
                    .filter(|r| !r.is_promised())
                    .map(|r| (wanted.score(p), r.loaded_at, p))
            })
            .collect();
        // Least wanted last, so `pop` takes it; among equals the oldest.
        list.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        while excess > 0 {
            let Some((_, _, victim)) = list.pop() else {
                return;
            };
            if let Some(page) = self.evict(victim) {
                Counters::add(&self.counters.evictions, 1);
                tracing::debug!(page = victim, "evict over budget");
                excess = excess.saturating_sub(page.cost);
            }
        }
    }

    /// Gives back a reservation whose load failed.
    pub fn cancel(&self, cost: u64) {
        self.counters
            .resident_bytes
            .fetch_sub(cost, Ordering::Relaxed);
    }

    /// Installs a loaded page whose cost was reserved by [`PageCache::admit`]
    /// and returns it, held: the caller keeps it however soon another load
    /// evicts it. `promised` keeps it for a sampler that asked.
    pub fn install(
        &self,
        index: &ContainerIndex,
        page: usize,
        data: PageData,
        checked: ReadyPage,
        cost: u64,
        promised: bool,
    ) -> Arc<ResidentPage> {
        let loaded_at = {
            let mut tick = self.admission.lock().unwrap_or_else(|e| e.into_inner());
            *tick += 1;
            *tick
        };
        let resident = ResidentPage {
            data,
            decoded: checked.decoded,
            tables: checked.tables,
            cost,
            loaded_at,
            installed: std::time::Instant::now(),
            promised: AtomicBool::new(promised),
            counters: Arc::clone(&self.counters),
        };
        let resident = Arc::new(resident);
        self.slots[page].store(Some(Arc::clone(&resident)));
        let address = Arc::as_ptr(&resident) as usize;
        for segment in index.page_segments(page) {
            self.directory.record(
                segment,
                &resident.segment(index, segment),
                address,
                resident.tables.sample_bits_address(segment),
            );
        }
        resident
    }

    /// The pages resident now.
    pub fn resident_pages(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&p| self.is_resident(p))
            .collect()
    }

    /// Drops every page (memory returns as holders let go).
    pub fn clear(&self) {
        for page in 0..self.slots.len() {
            if self.evict(page).is_some() {
                Counters::add(&self.counters.evictions, 1);
            }
        }
    }
}
