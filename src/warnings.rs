//! The warnings the library raises while a call runs, collected as values.
//!
//! The library reports what it accepted but doubts (a guessed unit, keys
//! resampled, channels skipped with `lenient`, bit rates raised after the
//! final check) as `tracing` events at the `WARN` level, wherever they
//! arise. [`collect`] runs a call and returns, besides its result, every
//! such event raised meanwhile as a [`Warning`]: a message and where it
//! applies. It works with or without a subscriber of the caller's: the
//! events still reach that subscriber (the command-line program prints
//! them), and are recorded on the way.
//!
//! The collector is the calling thread's scoped `tracing` dispatcher, so
//! it sees events raised on that thread. Work handed to other threads
//! takes it along with [`Scope`]: [`Scope::current`] on the calling
//! thread, [`Scope::enter`] on the worker (the library's own loops over
//! many files do this, and tag each warning with the file it came from).
//! The library raises its warnings on the thread that called it, never
//! inside its own parallel loops, so a scope carried onto the thread that
//! runs a call sees every warning of that call.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Level, Metadata, Subscriber};

/// One warning the library raised: what it doubted or changed, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// What is doubtful and what was done about it.
    pub message: String,
    /// The source file being read when it was raised, when the call was
    /// one of several files' (see [`Scope::for_file`]).
    pub file: Option<PathBuf>,
    /// The event's other fields, in order: where in the source (`source`,
    /// `clip`, `page`, ...) and how much.
    pub fields: Vec<(String, String)>,
    /// The module that raised it (`cinestream::import::gltf::resample`).
    pub origin: String,
}

impl Warning {
    /// The value of field `name`, if the warning has one.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for Warning {
    /// One line: where (the `source` field or the file) unless the message
    /// already names it, the message, and the other fields.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.as_ref().map(|p| p.display().to_string());
        let place = self.field("source").map(str::to_string).or(file);
        if let Some(place) = place.filter(|p| !self.message.contains(p.as_str())) {
            write!(f, "{place}: ")?;
        }
        f.write_str(&self.message)?;
        let rest: Vec<String> = self
            .fields
            .iter()
            .filter(|(name, _)| name != "source")
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        if !rest.is_empty() {
            write!(f, " ({})", rest.join(", "))?;
        }
        Ok(())
    }
}

/// Runs `call` and returns its result with every warning raised meanwhile
/// on this thread, or on threads that entered a [`Scope`] taken inside
/// it, in the order they were raised. Calls of `collect` nest: an outer
/// one sees the warnings of the inner ones too.
pub fn collect<R>(call: impl FnOnce() -> R) -> (R, Vec<Warning>) {
    let sink = Sink::default();
    let collector = Collector {
        inner: current_dispatch(),
        sink: sink.clone(),
        file: None,
    };
    let result = tracing::dispatcher::with_default(&Dispatch::new(collector), call);
    let warnings = std::mem::take(&mut *sink.lock());
    (result, warnings)
}

/// The warnings the innermost [`collect`] running on this thread (or on
/// the thread whose [`Scope`] this one entered) has gathered so far; empty
/// outside one. For a report printed before the call returns.
pub fn so_far() -> Vec<Warning> {
    tracing::dispatcher::get_default(|d| {
        d.downcast_ref::<Collector>()
            .map_or_else(Vec::new, |c| c.sink.lock().clone())
    })
}

/// The current thread's warning collection, to carry onto worker threads.
#[derive(Clone)]
pub struct Scope {
    dispatch: Dispatch,
}

impl Scope {
    /// This thread's scope: the innermost [`collect`] running here, or
    /// whatever `tracing` subscriber is in force outside one.
    pub fn current() -> Scope {
        Scope {
            dispatch: current_dispatch(),
        }
    }

    /// The same scope, its warnings tagged with `file` (the source a
    /// worker is reading). Outside a [`collect`], the scope unchanged.
    pub fn for_file(&self, file: &Path) -> Scope {
        match self.dispatch.downcast_ref::<Collector>() {
            Some(c) => Scope {
                dispatch: Dispatch::new(Collector {
                    inner: c.inner.clone(),
                    sink: c.sink.clone(),
                    file: Some(file.to_path_buf()),
                }),
            },
            None => self.clone(),
        }
    }

    /// Runs `work` on this thread inside the scope.
    pub fn enter<R>(&self, work: impl FnOnce() -> R) -> R {
        tracing::dispatcher::with_default(&self.dispatch, work)
    }
}

fn current_dispatch() -> Dispatch {
    tracing::dispatcher::get_default(Dispatch::clone)
}

/// Where a [`collect`] gathers its warnings, shared by every thread in it.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<Warning>>>);

impl Sink {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Warning>> {
        // A panic elsewhere while pushing leaves a whole Vec: keep it.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A subscriber that records warnings and hands every event and span on
/// to the subscriber that was in force (`inner`), which still decides what
/// it prints.
struct Collector {
    inner: Dispatch,
    sink: Sink,
    file: Option<PathBuf>,
}

/// Recorded: warnings and errors.
fn recorded(metadata: &Metadata<'_>) -> bool {
    metadata.is_event() && *metadata.level() <= Level::WARN
}

impl Subscriber for Collector {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        let inner = self.inner.register_callsite(metadata);
        match recorded(metadata) {
            true => Interest::always(),
            false => inner,
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        // `Dispatch` does not tell its subscriber's hint; with none behind
        // this one (a Python process), warnings are all there is to see.
        match self.inner.is::<tracing::subscriber::NoSubscriber>() {
            true => Some(LevelFilter::WARN),
            false => None,
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        recorded(metadata) || self.inner.enabled(metadata)
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.inner.new_span(span)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        self.inner.record(span, values)
    }

    fn record_follows_from(&self, span: &Id, follows: &Id) {
        self.inner.record_follows_from(span, follows)
    }

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        if recorded(metadata) {
            let mut fields = Fields::default();
            event.record(&mut fields);
            self.sink.lock().push(Warning {
                message: fields.message,
                file: self.file.clone(),
                fields: fields.others,
                origin: metadata.target().to_string(),
            });
        }
        if self.inner.enabled(metadata) {
            self.inner.event(event);
        }
    }

    fn enter(&self, span: &Id) {
        self.inner.enter(span)
    }

    fn exit(&self, span: &Id) {
        self.inner.exit(span)
    }

    fn clone_span(&self, id: &Id) -> Id {
        self.inner.clone_span(id)
    }

    fn try_close(&self, id: Id) -> bool {
        self.inner.try_close(id)
    }

    fn current_span(&self) -> tracing_core::span::Current {
        self.inner.current_span()
    }
}

/// An event's message and other fields, as text.
#[derive(Default)]
struct Fields {
    message: String,
    others: Vec<(String, String)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_string(),
            name => self.others.push((name.to_string(), value.to_string())),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `format_args!` messages and `%value` fields print plainly here.
        self.record_str(field, &format!("{value:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_the_warnings_of_the_call_and_nothing_else() {
        tracing::warn!("before");
        let (value, warnings) = collect(|| {
            tracing::info!("not a warning");
            tracing::warn!(source = "walk.gltf", clip = 3, "keys resampled");
            7
        });
        tracing::warn!("after");
        assert_eq!(value, 7);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = &warnings[0];
        assert_eq!(w.message, "keys resampled");
        assert_eq!(w.field("source"), Some("walk.gltf"));
        assert_eq!(w.field("clip"), Some("3"));
        assert_eq!(w.origin, module_path!());
        assert_eq!(w.to_string(), "walk.gltf: keys resampled (clip=3)");
    }

    #[test]
    fn a_scope_carries_the_collection_onto_other_threads_tagged_by_file() {
        let (_, warnings) = collect(|| {
            let scope = Scope::current();
            std::thread::scope(|threads| {
                for name in ["a.bvh", "b.bvh"] {
                    let scope = scope.for_file(Path::new(name));
                    threads.spawn(move || scope.enter(|| tracing::warn!("unit guessed")));
                }
                // A thread that does not enter the scope is not collected.
                threads.spawn(|| tracing::warn!("elsewhere"));
            });
            assert_eq!(so_far().len(), 2);
        });
        let mut files: Vec<String> = warnings
            .iter()
            .map(|w| {
                assert_eq!(w.message, "unit guessed");
                w.to_string()
            })
            .collect();
        files.sort();
        assert_eq!(files, ["a.bvh: unit guessed", "b.bvh: unit guessed"]);
    }

    #[test]
    fn nested_collections_both_see_the_inner_warning() {
        let (inner, outer) = collect(|| collect(|| tracing::warn!("inner")).1);
        assert_eq!(inner.len(), 1);
        assert_eq!(outer.len(), 1);
        assert!(so_far().is_empty());
    }
}
