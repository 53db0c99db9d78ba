//! Text from files made safe to show: a bone, clip, node or float track
//! name, a buffer URI or a path can hold any character, and one that a
//! terminal takes as a command (an escape sequence that sets the window's
//! title or clears the screen, a carriage return that overwrites the line)
//! must not reach it raw. Every place that shows such text, the program's
//! tables and every error message ([`Error`](crate::error::Error)'s display), goes
//! through [`escaped`]; what is stored stays byte for byte what it was.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` as it may be shown on a terminal: every control character (C0,
/// DEL, C1, newlines and tabs too) and every bidirectional override or
/// isolate (which reorder what follows) is written as a Rust-style escape,
/// `\u{1b}`; every other character, printable Unicode included, is kept.
/// Borrowed, without copying, when nothing needs escaping.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            // Writing to a String cannot fail.
            let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// Whether `c` is shown escaped (see [`escaped`]).
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        let hostile = "\x1b]0;title\x07\x1b[2J";
        assert_eq!(escaped(hostile), "\\u{1b}]0;title\\u{7}\\u{1b}[2J");
        assert_eq!(
            escaped("a\nb\rc\td\u{7f}\u{9b}"),
            "a\\u{a}b\\u{d}c\\u{9}d\\u{7f}\\u{9b}"
        );
        assert_eq!(escaped("x\u{202e}y"), "x\\u{202e}y");
        // Printable text, Unicode included, is borrowed as it is.
        for plain in ["mixamorig:Hips", "Ölçü/頭", "take 1.bin", ""] {
            assert!(matches!(escaped(plain), Cow::Borrowed(s) if s == plain));
        }
    }
}
