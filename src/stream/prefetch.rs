//! The prefetch worker: one thread per stream that keeps the pages of the
//! next few seconds of play resident, ahead of every playhead in its
//! direction of play.
//!
//! Players post where their playheads are to their mailboxes every frame
//! (a few plain stores, see `playhead::Mailbox`); everything else comes
//! over a bounded crossbeam channel that never blocks a sender. While
//! players are active the worker wakes every tick, reads the latest post of
//! each, and loads the planned pages soonest first, re-planning as soon as
//! a playhead jumps.
//! Before the plan come the pages samplers were told are not ready, in the
//! order asked, each promised to its sampler until it has it (fair
//! eviction, the cache's `Admission::Urgent`). An idle
//! worker blocks on the channel. Load errors come back as values on a
//! second channel. Dropping the sender (the stream) stops the worker at its
//! next wake, and the stream joins it.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, TryRecvError, TrySendError};

use super::cache::Admission;
use super::playhead::{Hint, Scorer};
use super::Shared;
use crate::error::{Error, Result};

/// What players and the stream ask of the worker.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Request {
    /// A player opened its mailbox: wakes an idle worker.
    Join,
    /// A player is gone.
    Leave(u64),
    /// Load this page as soon as possible (a non-blocking sampler missed it).
    Load(usize),
    /// Load this page first (a previewing sampler missed it): the newest
    /// such request goes first, and the oldest are dropped, since a
    /// previewing player has moved on from them.
    Preview(usize),
}

/// Requests a worker can fall behind by before new ones are dropped (a
/// dropped load is asked for again the next frame).
const QUEUE: usize = 1024;

/// Errors kept for the stream to collect; more are dropped (they repeat).
const ERROR_QUEUE: usize = 64;

/// Worker rounds (ticks) a page loaded for a "not ready" sampler stays
/// promised to it while other such samplers wait for room, if it never
/// comes back for the page: long enough for a sampler asking every frame
/// to come back (64 rounds of the default 5 ms tick are 320 ms), short
/// enough that a player that stopped asking cannot hold the others off.
const PROMISE_ROUNDS: u64 = 64;

/// The handle of a running worker.
#[derive(Debug)]
pub(crate) struct Prefetcher {
    requests: Option<Sender<Request>>,
    errors: Receiver<Error>,
    thread: Option<JoinHandle<()>>,
}

impl Prefetcher {
    pub fn spawn(shared: Arc<Shared>, lookahead: f64, tick: Duration) -> Result<Prefetcher> {
        let (requests, inbox) = crossbeam_channel::bounded(QUEUE);
        let (error_tx, errors) = crossbeam_channel::bounded(ERROR_QUEUE);
        let thread = std::thread::Builder::new()
            .name("cinestream-prefetch".into())
            .spawn(move || {
                let _span = tracing::debug_span!("prefetch", stream = shared.describe).entered();
                Worker {
                    shared,
                    inbox,
                    errors: error_tx,
                    lookahead,
                    tick,
                    hints: Vec::new(),
                    seeks: Vec::new(),
                    urgent: VecDeque::new(),
                    promised: Vec::new(),
                    round: 0,
                    reported: HashSet::new(),
                }
                .run();
                tracing::debug!("prefetch worker stopped");
            })
            .map_err(|source| Error::ThreadSpawn {
                what: "the prefetch thread",
                source,
            })?;
        Ok(Prefetcher {
            requests: Some(requests),
            errors,
            thread: Some(thread),
        })
    }

    /// Sends without waiting; a full queue drops the request.
    #[inline]
    pub fn send(&self, request: Request) {
        let urgent = matches!(request, Request::Load(_) | Request::Preview(_));
        if let Some(requests) = &self.requests {
            match requests.try_send(request) {
                Ok(()) | Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {}
            }
        }
        // A sampler waits for this page (or shows a preview): read it now.
        if let (true, Some(thread)) = (urgent, &self.thread) {
            thread.thread().unpark();
        }
    }

    pub fn take_errors(&self) -> Vec<Error> {
        self.errors.try_iter().collect()
    }

    /// True while the worker thread runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Prefetcher {
    fn drop(&mut self) {
        // Disconnecting wakes a blocked worker and ends a ticking one.
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("the prefetch worker panicked");
            }
        }
    }
}

/// Pages previewing samplers asked for that the worker keeps in line (at
/// least; one per playhead when there are more): older requests are
/// dropped, their players gone on to other pages.
const PREVIEW_QUEUE: usize = 2;

struct Worker {
    shared: Arc<Shared>,
    inbox: Receiver<Request>,
    errors: Sender<Error>,
    lookahead: f64,
    tick: Duration,
    /// Latest hint of each active player.
    hints: Vec<Hint>,
    /// Seeks each player had posted at the last read.
    seeks: Vec<(u64, u64)>,
    /// Pages "not ready" samplers asked for, first asked first, each once.
    urgent: VecDeque<usize>,
    /// Pages loaded for those samplers, and the round they were.
    promised: Vec<(usize, u64)>,
    /// Rounds the worker has woken for.
    round: u64,
    /// Pages whose error was already sent. The lookahead plan leaves them
    /// alone until they load: a file that keeps failing is read again once
    /// for each sampler's request, never in a loop of the worker's own.
    reported: HashSet<usize>,
}

/// What draining the inbox found.
enum Drained {
    Disconnected,
    Jumped,
    Quiet,
}

impl Worker {
    fn run(mut self) {
        loop {
            self.round += 1;
            if self.shared.mailboxes.is_empty() && self.urgent.is_empty() {
                match self.inbox.recv() {
                    Ok(request) => {
                        self.apply(request);
                    }
                    Err(_) => return,
                }
            } else {
                // A tick between plans, cut short when a sampler misses a
                // page (`Prefetcher::send` unparks for those alone: a
                // player's posts wait for the tick, so a seek's frame pays
                // for no wake-up).
                std::thread::park_timeout(self.tick);
            }
            if let Drained::Disconnected = self.drain() {
                return;
            }
            self.read_posts();
            self.shared.playheads.set(self.hints.clone());
            if !self.work() {
                return;
            }
            #[cfg(test)]
            self.shared
                .worker_rounds
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// True when the request makes plans made before it stale.
    fn apply(&mut self, request: Request) -> bool {
        match request {
            Request::Join => false,
            Request::Leave(player) => {
                self.hints.retain(|h| h.player != player);
                self.seeks.retain(|&(p, _)| p != player);
                false
            }
            Request::Preview(page) => {
                self.urgent.retain(|&p| p != page);
                self.urgent.push_front(page);
                self.urgent.truncate(PREVIEW_QUEUE.max(self.hints.len()));
                true
            }
            Request::Load(page) => {
                // A sampler asks every frame until it has the page: once in
                // the queue is enough, and keeps its place.
                if self.urgent.contains(&page) {
                    return false;
                }
                self.urgent.push_back(page);
                true
            }
        }
    }

    fn drain(&mut self) -> Drained {
        let mut jumped = false;
        loop {
            match self.inbox.try_recv() {
                Ok(request) => jumped |= self.apply(request),
                Err(TryRecvError::Empty) => {
                    return if jumped {
                        Drained::Jumped
                    } else {
                        Drained::Quiet
                    }
                }
                Err(TryRecvError::Disconnected) => return Drained::Disconnected,
            }
        }
    }

    /// Loads urgent pages, then the plan, until done, out of room, or a
    /// playhead jumps. False when the stream is gone.
    fn work(&mut self) -> bool {
        'replan: loop {
            // Pages samplers were told are not ready, in the order they
            // asked: each evicts the page wanted least that is not promised
            // to another such sampler, so every one of them gets its page in
            // turn, however many playheads want pages the budget cannot
            // hold at once. When every resident page is promised, the rest
            // wait for a tick.
            while let Some(&page) = self.urgent.front() {
                if !self.load(page, Admission::Urgent) {
                    self.expire_promises();
                    break;
                }
                self.urgent.pop_front();
                // Forget the promises kept, so the list stays as short as
                // the pages promised now.
                self.expire_promises();
                self.promised.push((page, self.round));
            }
            let plan = Scorer::new(&self.shared.index, self.hints.clone()).plan(self.lookahead);
            for (page, score) in plan {
                if self.shared.cache.is_resident(page) || self.reported.contains(&page) {
                    continue;
                }
                if !self.load(page, Admission::Prefetch(score)) {
                    break;
                }
                let drained = self.drain();
                let jumped = self.read_posts();
                match drained {
                    Drained::Disconnected => return false,
                    Drained::Jumped => {}
                    Drained::Quiet if jumped => {}
                    Drained::Quiet => continue,
                }
                self.shared.playheads.set(self.hints.clone());
                continue 'replan;
            }
            return true;
        }
    }

    /// Reads every player's latest post into the hints; true when a
    /// playhead jumped since the last read.
    fn read_posts(&mut self) -> bool {
        let mut jumped = false;
        for (hint, seeks) in self.shared.mailboxes.read() {
            match self.seeks.iter_mut().find(|(p, _)| *p == hint.player) {
                Some((_, seen)) => {
                    jumped |= *seen != seeks;
                    *seen = seeks;
                }
                None => {
                    jumped = true;
                    self.seeks.push((hint.player, seeks));
                }
            }
            match self.hints.iter_mut().find(|h| h.player == hint.player) {
                Some(h) => *h = hint,
                None => self.hints.push(hint),
            }
        }
        jumped
    }

    /// Stops keeping pages promised to samplers that have not come for
    /// them in [`PROMISE_ROUNDS`] rounds, so that they cannot hold off the
    /// samplers waiting for room; forgets the promises kept.
    fn expire_promises(&mut self) {
        let (cache, round) = (&self.shared.cache, self.round);
        self.promised.retain(|&(page, since)| {
            let resident = cache.get(page);
            let Some(resident) = resident.as_ref() else {
                return false;
            };
            if round.saturating_sub(since) >= PROMISE_ROUNDS {
                resident.promise(false);
            }
            resident.is_promised()
        });
    }

    /// False when there was no room.
    fn load(&mut self, page: usize, admission: Admission) -> bool {
        if page >= self.shared.index.pages().len() {
            return true;
        }
        match self.shared.load(page, admission, true) {
            Ok(loaded) => {
                // Sound again (a file restored): its next failure is news.
                if loaded.is_some() {
                    self.reported.remove(&page);
                }
                loaded.is_some()
            }
            Err(e) => {
                if self.reported.insert(page) {
                    let _ = self.errors.try_send(e);
                }
                true
            }
        }
    }
}
