//! Progress on long work: an indicatif bar or spinner on stderr when it is a
//! terminal, nothing otherwise (so JSON on stdout and logs stay clean).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `len` items, e.g. clips, labelled `what`.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    // The template is a literal known to parse; fall back to the default style.
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {msg} [{bar:32}] {pos}/{len} ({elapsed}, eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A spinner for one step of unknown length.
pub fn spinner(what: &str) -> ProgressBar {
    let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
        spinner.set_style(style);
    }
    spinner.set_message(what.to_string());
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner
}

/// A bar over `len` steps that redraws only when a step ends: no ticking
/// thread, so it does not disturb timings taken meanwhile.
pub fn quiet_bar(len: u64, what: &str) -> ProgressBar {
    let bar = bar(len, what);
    bar.disable_steady_tick();
    bar
}
