//! Number and time labels shared by the figures' axes and captions.

pub(super) fn format_count(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{}M", significant(v / 1e6)),
        v if v >= 1e3 => format!("{}k", significant(v / 1e3)),
        v => significant(v),
    }
}

/// A time given in µs, in the unit a person reads it in: µs, ms or s.
pub(super) fn time_text(us: f64) -> String {
    match us {
        us if us >= 1e6 => format!("{} s", significant(us / 1e6)),
        us if us >= 1e3 => format!("{} ms", significant(us / 1e3)),
        us => format!("{} µs", significant(us)),
    }
}

/// Three significant digits, without trailing zeros (axis key points carry
/// float noise: 0.1 arrives as 0.10000000000000002).
pub(super) fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (2.0 - v.abs().log10().floor()).clamp(0.0, 12.0) as usize;
    let text = format!("{v:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}
