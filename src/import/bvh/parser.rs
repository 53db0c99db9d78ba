//! The BVH grammar: the HIERARCHY section into joints and their channels,
//! the MOTION section into poses, and every error message with its line.

use glam::DVec3;

use super::build::{evaluate, sample_rate_from_frame_time};
use super::joints::{Channel, Joint, Motion};
use super::lexer::Lexer;
use crate::clip::{Transform, MAX_BONES};
use crate::error::{Error, Result};

/// Three positions and three rotations, each at most once.
const MAX_JOINT_CHANNELS: usize = 6;

/// Longest excerpt of the source quoted in an error message.
const QUOTE_CHARS: usize = 40;
/// A block whose closing brace has not been seen yet.
#[derive(Clone, Copy)]
enum Open {
    Joint(usize),
    EndSite { line: usize, has_offset: bool },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Keyword {
    Root,
    Joint,
    End,
    Offset,
    Channels,
    Motion,
    OpenBrace,
    CloseBrace,
}

impl Keyword {
    fn parse(token: &str) -> Option<Keyword> {
        const WORDS: [(&str, Keyword); 8] = [
            ("ROOT", Keyword::Root),
            ("JOINT", Keyword::Joint),
            ("End", Keyword::End),
            ("OFFSET", Keyword::Offset),
            ("CHANNELS", Keyword::Channels),
            ("MOTION", Keyword::Motion),
            ("{", Keyword::OpenBrace),
            ("}", Keyword::CloseBrace),
        ];
        WORDS
            .iter()
            .find(|(w, _)| w.eq_ignore_ascii_case(token))
            .map(|&(_, k)| k)
    }
}

pub(super) struct Parser<'a, 's> {
    pub(super) source_name: &'s str,
    pub(super) lex: Lexer<'a>,
    /// Accept frame lines that disagree with `Frames:`, with a warning.
    pub(super) lenient: bool,
}

impl<'a> Parser<'a, '_> {
    fn err(&self, line: usize, message: impl Into<String>) -> Error {
        Error::Bvh {
            source_name: self.source_name.to_string(),
            line,
            message: message.into(),
        }
    }

    /// Parses from `HIERARCHY` through the `MOTION` keyword. Iterative, so
    /// deep nesting cannot overflow the stack.
    pub(super) fn parse_hierarchy(&mut self) -> Result<Vec<Joint<'a>>> {
        match self.lex.token() {
            Some((_, t)) if t.eq_ignore_ascii_case("HIERARCHY") => {}
            Some((line, t)) => {
                return Err(self.err(
                    line,
                    format!("expected 'HIERARCHY' at the start, found '{}'", quote(t)),
                ))
            }
            None => return Err(self.err(self.lex.eof_line(), "empty file: expected 'HIERARCHY'")),
        }
        let mut joints: Vec<Joint<'a>> = Vec::new();
        let mut stack: Vec<Open> = Vec::new();
        let mut next_channel = 0usize;
        loop {
            let Some((line, token)) = self.lex.token() else {
                let eof = self.lex.eof_line();
                return Err(match stack.last() {
                    None if joints.is_empty() => {
                        self.err(eof, "file ends in HIERARCHY: expected 'ROOT'")
                    }
                    None => self.err(
                        eof,
                        "missing MOTION section: file ends after the hierarchy, expected 'MOTION'",
                    ),
                    Some(&open) => self.err(
                        eof,
                        format!(
                            "file ends inside {}: expected '}}'",
                            describe(&joints, open)
                        ),
                    ),
                });
            };
            let keyword = Keyword::parse(token);
            match stack.last().copied() {
                None => match keyword {
                    Some(Keyword::Root) => {
                        let index = self.open_joint(&mut joints, None, line, "ROOT")?;
                        stack.push(Open::Joint(index));
                    }
                    Some(Keyword::Motion) if !joints.is_empty() => return Ok(joints),
                    Some(Keyword::Motion) => {
                        return Err(self.err(line, "expected at least one 'ROOT' before 'MOTION'"))
                    }
                    Some(Keyword::Joint) => {
                        let name = strip_open_brace(self.lex.rest_of_line()).0;
                        return Err(self.err(
                            line,
                            format!(
                                "JOINT '{}' outside any ROOT: expected 'ROOT' or 'MOTION'",
                                quote(name)
                            ),
                        ));
                    }
                    Some(Keyword::CloseBrace) => {
                        return Err(self.err(
                            line,
                            "unbalanced '}': no block is open, expected 'ROOT' or 'MOTION'",
                        ))
                    }
                    _ => {
                        return Err(self.err(
                            line,
                            format!("expected 'ROOT' or 'MOTION', found '{}'", quote(token)),
                        ))
                    }
                },
                Some(Open::Joint(j)) => match keyword {
                    Some(Keyword::Offset) => {
                        let offset = self.parse_offset(line)?;
                        let joint = joints.get_mut(j).ok_or_else(|| internal(self, line))?;
                        if joint.offset.is_some() {
                            return Err(self.err(
                                line,
                                format!("second OFFSET for joint '{}'", quote(joint.name)),
                            ));
                        }
                        joint.offset = Some(offset);
                    }
                    Some(Keyword::Channels) => {
                        let channels = self.parse_channels(line)?;
                        let joint = joints.get_mut(j).ok_or_else(|| internal(self, line))?;
                        if let Some(first) = joint.channels_line {
                            return Err(self.err(
                                line,
                                format!(
                                    "second CHANNELS for joint '{}' (first on line {first})",
                                    quote(joint.name)
                                ),
                            ));
                        }
                        joint.channels_line = Some(line);
                        joint.first_channel = next_channel;
                        next_channel += channels.len();
                        joint.channels = channels;
                    }
                    Some(Keyword::Joint) => {
                        let index = self.open_joint(&mut joints, Some(j), line, "JOINT")?;
                        stack.push(Open::Joint(index));
                    }
                    Some(Keyword::End) => {
                        let (rest, has_brace) = strip_open_brace(self.lex.rest_of_line());
                        if !rest.eq_ignore_ascii_case("Site") {
                            return Err(self.err(
                                line,
                                format!("expected 'End Site', found 'End {}'", quote(rest)),
                            ));
                        }
                        if !has_brace {
                            self.expect_open_brace("End Site")?;
                        }
                        stack.push(Open::EndSite {
                            line,
                            has_offset: false,
                        });
                    }
                    Some(Keyword::CloseBrace) => {
                        let joint = joints.get(j).ok_or_else(|| internal(self, line))?;
                        if joint.offset.is_none() {
                            return Err(self.err(
                                joint.line,
                                format!(
                                    "joint '{}' has no OFFSET: expected 'OFFSET x y z' in its \
                                     block (closed on line {line})",
                                    quote(joint.name)
                                ),
                            ));
                        }
                        stack.pop();
                    }
                    _ => {
                        let open = describe(&joints, Open::Joint(j));
                        let hint = match keyword {
                            Some(Keyword::Root | Keyword::Motion) => " (missing '}'?)",
                            _ => "",
                        };
                        return Err(self.err(
                            line,
                            format!(
                                "expected OFFSET, CHANNELS, JOINT, End Site or '}}' in {open}, \
                                 found '{}'{hint}",
                                quote(token)
                            ),
                        ));
                    }
                },
                Some(Open::EndSite {
                    line: site_line,
                    has_offset,
                }) => match keyword {
                    Some(Keyword::Offset) if !has_offset => {
                        // Only the leaf's length; it is no bone, so the value is dropped.
                        self.parse_offset(line)?;
                        stack.pop();
                        stack.push(Open::EndSite {
                            line: site_line,
                            has_offset: true,
                        });
                    }
                    Some(Keyword::CloseBrace) => {
                        stack.pop();
                    }
                    _ => {
                        return Err(self.err(
                            line,
                            format!(
                                "expected {}'}}' in End Site (opened on line {site_line}), \
                                 found '{}'",
                                if has_offset { "" } else { "OFFSET or " },
                                quote(token)
                            ),
                        ))
                    }
                },
            }
        }
    }

    /// Handles `ROOT name` / `JOINT name` and its opening brace.
    fn open_joint(
        &mut self,
        joints: &mut Vec<Joint<'a>>,
        parent: Option<usize>,
        line: usize,
        keyword: &str,
    ) -> Result<usize> {
        let (name, has_brace) = strip_open_brace(self.lex.rest_of_line());
        if name.is_empty() {
            return Err(self.err(line, format!("expected a joint name after '{keyword}'")));
        }
        if joints.len() >= MAX_BONES {
            return Err(self.err(
                line,
                format!("more than {MAX_BONES} joints: a skeleton holds at most {MAX_BONES} bones"),
            ));
        }
        if !has_brace {
            self.expect_open_brace(&format!("{keyword} '{}'", quote(name)))?;
        }
        joints.push(Joint {
            name,
            parent,
            line,
            offset: None,
            channels_line: None,
            channels: Vec::new(),
            first_channel: 0,
        });
        Ok(joints.len() - 1)
    }

    fn expect_open_brace(&mut self, after: &str) -> Result<()> {
        match self.lex.token() {
            Some((_, "{")) => Ok(()),
            Some((line, token)) => Err(self.err(
                line,
                format!("expected '{{' after {after}, found '{}'", quote(token)),
            )),
            None => Err(self.err(
                self.lex.eof_line(),
                format!("file ends after {after}: expected '{{'"),
            )),
        }
    }

    fn parse_offset(&mut self, line: usize) -> Result<DVec3> {
        let rest = self.lex.rest_of_line();
        let count = rest.split_whitespace().count();
        if count != 3 {
            return Err(self.err(line, format!("OFFSET expects 3 numbers, found {count}")));
        }
        let mut xyz = [0.0; 3];
        for (slot, token) in xyz.iter_mut().zip(rest.split_whitespace()) {
            *slot = parse_number(token).map_err(|m| self.err(line, format!("OFFSET: {m}")))?;
        }
        Ok(DVec3::from_array(xyz))
    }

    fn parse_channels(&mut self, line: usize) -> Result<Vec<Channel>> {
        let mut tokens = self.lex.rest_of_line().split_whitespace();
        let declared = match tokens.next() {
            None => {
                return Err(self.err(
                    line,
                    "expected a channel count and channel names after CHANNELS, found nothing",
                ))
            }
            Some(count) => count.parse::<usize>().map_err(|_| {
                self.err(
                    line,
                    format!(
                        "expected a channel count (0 to {MAX_JOINT_CHANNELS}) after CHANNELS, \
                         found '{}'",
                        quote(count)
                    ),
                )
            })?,
        };
        if declared > MAX_JOINT_CHANNELS {
            return Err(self.err(
                line,
                format!(
                    "CHANNELS declares {declared}: expected at most {MAX_JOINT_CHANNELS} \
                     (3 positions and 3 rotations)"
                ),
            ));
        }
        let listed = tokens.clone().count();
        if listed != declared {
            return Err(self.err(
                line,
                format!("CHANNELS declares {declared} but lists {listed} names"),
            ));
        }
        let mut channels = Vec::with_capacity(declared);
        for name in tokens {
            let channel = Channel::parse(name).ok_or_else(|| {
                self.err(
                    line,
                    format!(
                        "unknown channel '{}': expected Xposition, Yposition, Zposition, \
                         Xrotation, Yrotation or Zrotation",
                        quote(name)
                    ),
                )
            })?;
            if channels.contains(&channel) {
                return Err(self.err(line, format!("channel '{}' listed twice", channel.name())));
            }
            channels.push(channel);
        }
        Ok(channels)
    }

    /// Parses the MOTION section (after its keyword) and evaluates every frame.
    pub(super) fn parse_motion(&mut self, joints: &[Joint<'a>]) -> Result<Motion> {
        let motion_line = self.lex.line;
        let trailing = self.lex.rest_of_line();
        if !trailing.is_empty() {
            return Err(self.err(
                motion_line,
                format!(
                    "expected nothing after 'MOTION' on its line, found '{}'",
                    quote(trailing)
                ),
            ));
        }
        let mut frames: Option<(usize, usize)> = None;
        let mut frame_time: Option<(f64, usize)> = None;
        while frames.is_none() || frame_time.is_none() {
            let missing = if frames.is_none() {
                "'Frames: <count>'"
            } else {
                "'Frame Time: <seconds>'"
            };
            let Some((line, text)) = self.lex.lines.next_nonblank() else {
                return Err(self.err(
                    self.lex.lines.line,
                    format!("file ends in MOTION: expected a {missing} line"),
                ));
            };
            if let Some(value) = header_value(text, &["Frames"]) {
                if let Some((_, first)) = frames {
                    return Err(self.err(
                        line,
                        format!("second 'Frames:' line (first on line {first})"),
                    ));
                }
                let count = value.parse::<usize>().map_err(|_| {
                    self.err(
                        line,
                        format!(
                            "expected a whole number of frames after 'Frames:', found '{}'",
                            quote(value)
                        ),
                    )
                })?;
                if count == 0 {
                    return Err(self.err(
                        line,
                        "expected at least 1 frame, found 'Frames: 0': a clip needs a sample",
                    ));
                }
                frames = Some((count, line));
            } else if let Some(value) = header_value(text, &["Frame", "Time"]) {
                if let Some((_, first)) = frame_time {
                    return Err(self.err(
                        line,
                        format!("second 'Frame Time:' line (first on line {first})"),
                    ));
                }
                let seconds = value
                    .parse::<f64>()
                    .ok()
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .ok_or_else(|| {
                        self.err(
                            line,
                            format!(
                                "expected a positive frame time in seconds after 'Frame Time:', \
                                 found '{}'",
                                quote(value)
                            ),
                        )
                    })?;
                frame_time = Some((seconds, line));
            } else {
                return Err(self.err(
                    line,
                    format!("expected a {missing} line, found '{}'", quote(text.trim())),
                ));
            }
        }
        let (Some((num_frames, frames_line)), Some((seconds, time_line))) = (frames, frame_time)
        else {
            return Err(internal(self, motion_line));
        };
        let rate = sample_rate_from_frame_time(seconds) as f32;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(self.err(
                time_line,
                format!("frame time {seconds} s gives a sample rate a clip cannot store"),
            ));
        }

        let channels: usize = joints.iter().map(|j| j.channels.len()).sum();
        if channels == 0 {
            return Err(self.err(
                motion_line,
                "the hierarchy declares no channels: expected CHANNELS on at least one joint",
            ));
        }
        // Never trust `Frames:` for allocation: a frame line holds at least
        // one byte per value plus a separator, so the rest of the text bounds
        // how many frames can really follow.
        let fit = self.lex.lines.remaining() / (2 * channels) + 1;
        let mut poses: Vec<Transform> = Vec::new();
        if let Some(n) = num_frames.min(fit).checked_mul(joints.len()) {
            // A failed reservation only means growing as frames arrive.
            let _ = poses.try_reserve(n);
        }
        let mut values = vec![0.0f64; channels];
        let mut frame = 0usize;
        while frame < num_frames {
            let Some((line, text)) = self.lex.lines.next_nonblank() else {
                if self.lenient && frame > 0 {
                    break;
                }
                return Err(self.err(
                    self.lex.lines.line,
                    format!(
                        "file ends after {frame} of {num_frames} frames (declared on line \
                         {frames_line}): expected one line of {channels} values per frame"
                    ),
                ));
            };
            frame += 1;
            self.parse_frame(joints, line, text, frame, &mut values)?;
            poses.extend(joints.iter().map(|joint| evaluate(joint, &values)));
        }
        if let Some((line, text)) = self.lex.lines.next_nonblank() {
            if !self.lenient {
                // Both numbers, so that a count that is merely off shows as such.
                let mut lines = num_frames + 1;
                while self.lex.lines.next_nonblank().is_some() {
                    lines += 1;
                }
                return Err(self.err(
                    line,
                    format!(
                        "expected the end of the file after the {num_frames} frames declared on \
                         line {frames_line}, found more data: '{}' ({lines} lines of data for \
                         'Frames: {num_frames}'; lenient import keeps them all)",
                        quote(text.trim())
                    ),
                ));
            }
            // The lines are the motion; the count is what the exporter got
            // wrong. Each extra line must still be a whole frame.
            frame += 1;
            self.parse_frame(joints, line, text, frame, &mut values)?;
            poses.extend(joints.iter().map(|joint| evaluate(joint, &values)));
            while let Some((line, text)) = self.lex.lines.next_nonblank() {
                frame += 1;
                self.parse_frame(joints, line, text, frame, &mut values)?;
                poses.extend(joints.iter().map(|joint| evaluate(joint, &values)));
            }
        }
        if frame != num_frames {
            let kept = match frame > num_frames {
                true => "kept them all",
                false => "kept those present",
            };
            tracing::warn!(
                "bvh: {} line {frames_line}: 'Frames: {num_frames}' but {frame} frame lines \
                 follow; {kept} (lenient)",
                self.source_name
            );
        }
        Ok(Motion {
            sample_rate: rate,
            num_frames: frame,
            poses,
        })
    }

    /// Reads frame number `frame` (from 1) from its line into `values`.
    fn parse_frame(
        &self,
        joints: &[Joint<'a>],
        line: usize,
        text: &str,
        frame: usize,
        values: &mut [f64],
    ) -> Result<()> {
        let mut found = 0usize;
        for token in text.split_ascii_whitespace() {
            if let Some(slot) = values.get_mut(found) {
                *slot = parse_number(token).map_err(|m| {
                    self.err(
                        line,
                        format!(
                            "frame {frame}, value {} ({}): {m}",
                            found + 1,
                            channel_label(joints, found)
                        ),
                    )
                })?;
            }
            found += 1;
        }
        if found != values.len() {
            return Err(self.err(
                line,
                format!(
                    "expected {} values for frame {frame}, found {found}",
                    values.len()
                ),
            ));
        }
        Ok(())
    }
}

/// Parses a number that must also fit the clip's `f32` storage.
fn parse_number(token: &str) -> std::result::Result<f64, String> {
    let value = token
        .parse::<f64>()
        .map_err(|_| format!("expected a number, found '{}'", quote(token)))?;
    if !value.is_finite() {
        return Err(format!(
            "expected a finite number, found '{}'",
            quote(token)
        ));
    }
    if value.abs() > f64::from(f32::MAX) {
        return Err(format!(
            "expected a number within 32-bit float range, found '{}'",
            quote(token)
        ));
    }
    Ok(value)
}

/// The value after `words` and a colon, e.g. `Frame Time: 0.033` with
/// `["Frame", "Time"]`; `None` if the line does not start with the words.
fn header_value<'t>(line: &'t str, words: &[&str]) -> Option<&'t str> {
    let mut rest = line.trim_start();
    for word in words {
        let head = rest.get(..word.len())?;
        if !head.eq_ignore_ascii_case(word) {
            return None;
        }
        rest = rest.get(word.len()..)?.trim_start();
    }
    Some(rest.strip_prefix(':')?.trim())
}

/// Splits a trailing `{` off a header line (`ROOT Hips {`).
fn strip_open_brace(rest: &str) -> (&str, bool) {
    match rest.strip_suffix('{') {
        Some(head) => (head.trim_end(), true),
        None => (rest, false),
    }
}

/// Which joint and channel a frame value belongs to, for error messages.
fn channel_label(joints: &[Joint<'_>], index: usize) -> String {
    joints
        .iter()
        .find_map(|j| {
            let k = index.checked_sub(j.first_channel)?;
            let channel = j.channels.get(k)?;
            Some(format!("joint '{}' {}", quote(j.name), channel.name()))
        })
        .unwrap_or_else(|| "unknown channel".to_string())
}

fn describe(joints: &[Joint<'_>], open: Open) -> String {
    match open {
        Open::Joint(j) => match joints.get(j) {
            Some(joint) => format!(
                "joint '{}' (opened on line {})",
                quote(joint.name),
                joint.line
            ),
            None => "a joint".to_string(),
        },
        Open::EndSite { line, .. } => format!("End Site (opened on line {line})"),
    }
}

/// Source text for a message, shortened so a garbage line cannot flood it.
fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let mut quoted: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        quoted.push_str("...");
    }
    quoted
}

/// A broken invariant of this parser, reported rather than panicking.
fn internal(parser: &Parser<'_, '_>, line: usize) -> Error {
    parser.err(line, "internal error in the BVH parser")
}

#[cfg(test)]
mod tests {
    use super::super::{parse_bvh, parse_bvh_with};
    use super::*;
    use crate::clip::{Clip, LengthUnit};
    use crate::import::ImportOptions;
    use glam::{Quat, Vec3};

    fn parse(text: &str) -> Result<Clip> {
        parse_bvh(text, "test.bvh", LengthUnit::CENTIMETRE)
    }

    /// The line and message of a BVH error; fails the test on anything else.
    fn bvh_error(text: &str) -> (usize, String) {
        match parse(text) {
            Err(Error::Bvh {
                source_name,
                line,
                message,
            }) => {
                assert_eq!(source_name, "test.bvh");
                (line, message)
            }
            Err(other) => panic!("expected Error::Bvh, got {other:?}"),
            Ok(clip) => panic!("expected an error, parsed {} samples", clip.num_samples()),
        }
    }

    fn assert_bvh_error(text: &str, line: usize, needles: &[&str]) {
        let (found_line, message) = bvh_error(text);
        assert_eq!(found_line, line, "wrong line for: {message}");
        for needle in needles {
            assert!(message.contains(needle), "{message:?} lacks {needle:?}");
        }
    }

    /// Two roots, End Sites, mixed channel orders and counts, CRLF and tabs,
    /// exponents and a leading '+'.
    const SMALL: &str = "HIERARCHY\r\n\
        ROOT Hips\r\n\
        {\r\n\
        \tOFFSET 1 2 3\r\n\
        \tCHANNELS 6 Xposition Zrotation Yposition Xrotation Zposition Yrotation \r\n\
        \tJOINT Spine-1\r\n\
        \t{\r\n\
        \t\tOFFSET 0 10 0\r\n\
        \t\tCHANNELS 3 Xrotation Yrotation Zrotation\r\n\
        \t\tJOINT mixamorig:Head Top\r\n\
        \t\t{\r\n\
        \t\t\tOFFSET 0\t5.5e+00 0\r\n\
        \t\t\tCHANNELS 3 Yrotation Zrotation Xrotation\r\n\
        \t\t\tEnd Site\r\n\
        \t\t\t{\r\n\
        \t\t\t\tOFFSET 0 3 0\r\n\
        \t\t\t}\r\n\
        \t\t}\r\n\
        \t}\r\n\
        \tJOINT Leg {\r\n\
        \t\tOFFSET 4 -8 0\r\n\
        \t\tCHANNELS 0\r\n\
        \t\tEnd site\r\n\
        \t\t{\r\n\
        \t\t\tOFFSET 0 -40 0\r\n\
        \t\t}\r\n\
        \t}\r\n\
        }\r\n\
        \r\n\
        ROOT Prop\r\n\
        {\r\n\
        \tOFFSET 0 0 0\r\n\
        \tCHANNELS 1 zrotation\r\n\
        }\r\n\
        MOTION\r\n\
        Frames:\t3\r\n\
        Frame Time:\t0.0333333\r\n\
        1 0 2 0 3 0   10 20 30   5.1072e-06 0 0   +90\r\n\
        \t1.5 90 2 0 3 0 0 0 0 0 0 0 -180 \r\n\
        \r\n\
        1 0 2 45 3 0 0 0 0 0 0 0 0\r\n\
        \r\n";

    #[test]
    fn parses_small_file_with_two_roots() {
        let clip = parse(SMALL).unwrap();
        let skeleton = clip.skeleton();
        let names: Vec<&str> = skeleton.bones().iter().map(|b| b.name.as_str()).collect();
        assert_eq!(
            names,
            ["Hips", "Spine-1", "mixamorig:Head Top", "Leg", "Prop"]
        );
        let parents: Vec<Option<usize>> = skeleton.bones().iter().map(|b| b.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(1), Some(0), None]);
        assert_eq!(clip.num_samples(), 3);
        assert_eq!(clip.sample_rate(), 30.0);
        assert_eq!(clip.unit(), LengthUnit::CENTIMETRE);
        assert_eq!(clip.name(), "test.bvh");
        assert_eq!(
            skeleton.bones()[2].bind.translation,
            Vec3::new(0.0, 5.5, 0.0)
        );
        assert_eq!(
            skeleton.bones()[3].bind.translation,
            Vec3::new(4.0, -8.0, 0.0)
        );

        // Position channels override the offset; rotations follow the listed order.
        let pose = clip.pose(1);
        assert_eq!(pose[0].translation, Vec3::new(1.5, 2.0, 3.0));
        assert!(pose[0]
            .rotation
            .abs_diff_eq(Quat::from_rotation_z(90f32.to_radians()), 1e-6));
        assert_eq!(pose[1].translation, Vec3::new(0.0, 10.0, 0.0));
        assert_eq!(pose[3].rotation, Quat::IDENTITY);
        assert!(pose[4]
            .rotation
            .abs_diff_eq(Quat::from_rotation_z(-std::f32::consts::PI), 1e-6));
        let first = clip.pose(0);
        let expected = Quat::from_rotation_x(10f32.to_radians())
            * Quat::from_rotation_y(20f32.to_radians())
            * Quat::from_rotation_z(30f32.to_radians());
        assert!(first[1].rotation.abs_diff_eq(expected, 1e-6));
        let expected_head = Quat::from_rotation_y(5.1072e-6f32.to_radians());
        assert!(first[2].rotation.abs_diff_eq(expected_head, 1e-9));
        assert!(first[4]
            .rotation
            .abs_diff_eq(Quat::from_rotation_z(std::f32::consts::FRAC_PI_2), 1e-6));
        for p in clip.poses() {
            assert_eq!(p.scale, Vec3::ONE);
        }
    }

    #[test]
    fn unit_is_stored_and_values_kept_as_is() {
        let metre = parse_bvh(SMALL, "m", LengthUnit::METRE).unwrap();
        assert_eq!(metre.unit(), LengthUnit::METRE);
        assert_eq!(metre.pose(1)[0].translation, Vec3::new(1.5, 2.0, 3.0));
    }

    // ---- Frame time ----

    fn with_frame_time(time: &str) -> String {
        format!(
            "HIERARCHY\nROOT a\n{{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}}\nMOTION\n\
             Frames: 2\nFrame Time: {time}\n0\n1\n"
        )
    }

    #[test]
    fn frame_time_snaps_to_whole_rates_within_tolerance() {
        let rate = |t: &str| parse(&with_frame_time(t)).unwrap().sample_rate();
        assert_eq!(rate("0.0333333"), 30.0);
        assert_eq!(rate("0.033333333333"), 30.0);
        assert_eq!(rate("0.0083333"), 120.0);
        assert_eq!(rate("0.04"), 25.0);
        assert_eq!(rate("0.016667"), 60.0);
        assert_eq!(rate("0.03"), (1.0 / 0.03) as f32);
        assert_eq!(rate("2"), 0.5);
        assert_eq!(rate("1"), 1.0);
    }

    #[test]
    fn frame_time_must_be_positive_and_finite() {
        for bad in ["0", "-0.03", "nan", "inf", "fast", ""] {
            assert_bvh_error(
                &with_frame_time(bad),
                9,
                &["expected a positive frame time"],
            );
        }
        assert_bvh_error(&with_frame_time("1e-300"), 9, &["sample rate"]);
    }

    #[test]
    fn motion_headers_accept_spacing_variants() {
        let text = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 1 Xrotation\n}\nMOTION\n\n\
                    FRAMES :2   \n  frame time:0.04\n\n0\n\n1\n\n\n";
        let clip = parse(text).unwrap();
        assert_eq!(clip.num_samples(), 2);
        assert_eq!(clip.sample_rate(), 25.0);
    }

    #[test]
    fn lone_carriage_returns_end_lines() {
        let text = with_frame_time("0.04").replace('\n', "\r");
        assert_eq!(parse(&text).unwrap().num_samples(), 2);
        let broken = "HIERARCHY\rROOT a\r{\r OFFSET 0 0\r}\r";
        assert_bvh_error(broken, 4, &["OFFSET expects 3 numbers, found 2"]);
    }

    // ---- Malformed input: each names its line and what was expected ----

    const GOOD: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 5 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 90 0 0 0 0 10 20 30
0 91 0 1 0 0 11 21 31
0 92 0 2 0 0 12 22 32
";

    /// `GOOD` with line `line` (1-based) replaced.
    fn good_with(line: usize, replacement: &str) -> String {
        GOOD.lines()
            .enumerate()
            .map(|(i, l)| if i + 1 == line { replacement } else { l })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn good_fixture_parses() {
        let clip = parse(GOOD).unwrap();
        assert_eq!(clip.num_bones(), 2);
        assert_eq!(clip.num_samples(), 3);
        assert_eq!(clip.pose(2)[0].translation, Vec3::new(0.0, 92.0, 0.0));
    }

    #[test]
    fn truncated_in_hierarchy() {
        let cut: String = GOOD.lines().take(11).map(|l| format!("{l}\n")).collect();
        assert_bvh_error(
            &cut,
            12,
            &["file ends inside End Site (opened on line 10)", "'}'"],
        );
        let cut: String = GOOD.lines().take(10).map(|l| format!("{l}\n")).collect();
        assert_bvh_error(&cut, 11, &["file ends after End Site: expected '{'"]);
        let cut: String = GOOD.lines().take(7).map(|l| format!("{l}\n")).collect();
        assert_bvh_error(
            &cut,
            8,
            &["file ends inside joint 'Spine' (opened on line 6)"],
        );
        // Cut mid-line, no final newline: the end is on the last line.
        let cut = &GOOD[..GOOD.find("JOINT Spine").unwrap() + 5];
        assert_bvh_error(cut, 6, &["expected a joint name after 'JOINT'"]);
        assert_bvh_error(
            "HIERARCHY\nROOT Hips\n",
            3,
            &["file ends after ROOT 'Hips'", "'{'"],
        );
        assert_bvh_error("", 1, &["empty file", "HIERARCHY"]);
        assert_bvh_error("HIERARCHY\n", 2, &["expected 'ROOT'"]);
    }

    #[test]
    fn truncated_in_motion_data() {
        let cut: String = GOOD.lines().take(20).map(|l| format!("{l}\n")).collect();
        assert_bvh_error(&cut, 21, &["file ends after 2 of 3 frames", "9 values"]);
        let cut: String = GOOD.lines().take(17).map(|l| format!("{l}\n")).collect();
        assert_bvh_error(&cut, 18, &["file ends in MOTION", "Frame Time"]);
        let cut: String = GOOD.lines().take(16).map(|l| format!("{l}\n")).collect();
        assert_bvh_error(&cut, 17, &["file ends in MOTION", "Frames"]);
        // A value cut in half leaves a short last line.
        let cut = &GOOD[..GOOD.len() - 7];
        assert_bvh_error(cut, 21, &["expected 9 values for frame 3, found 7"]);
    }

    #[test]
    fn channels_count_must_match_names() {
        let text = good_with(
            5,
            "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation",
        );
        assert_bvh_error(&text, 5, &["CHANNELS declares 6 but lists 5 names"]);
        assert_bvh_error(
            &good_with(9, "CHANNELS 7 Xrotation"),
            9,
            &["CHANNELS declares 7", "at most 6"],
        );
        assert_bvh_error(
            &good_with(9, "CHANNELS three Xrotation"),
            9,
            &["expected a channel count", "'three'"],
        );
        assert_bvh_error(
            &good_with(9, "CHANNELS 2 Xrotation Wrotation"),
            9,
            &["unknown channel 'Wrotation'", "expected Xposition"],
        );
        assert_bvh_error(
            &good_with(9, "CHANNELS 2 Xrotation xROTATION"),
            9,
            &["channel 'Xrotation' listed twice"],
        );
    }

    #[test]
    fn frame_line_with_wrong_value_count() {
        assert_bvh_error(
            &good_with(20, "0 91 0 1 0 0 11 21"),
            20,
            &["expected 9 values for frame 2, found 8"],
        );
        assert_bvh_error(
            &good_with(21, "0 92 0 2 0 0 12 22 32 7"),
            21,
            &["expected 9 values for frame 3, found 10"],
        );
    }

    #[test]
    fn bad_numbers_are_quoted() {
        assert_bvh_error(
            &good_with(20, "0 91 0 1.2.3 0 0 11 21 31"),
            20,
            &[
                "frame 2, value 4",
                "joint 'Hips' Zrotation",
                "expected a number, found '1.2.3'",
            ],
        );
        assert_bvh_error(
            &good_with(8, "    OFFSET 0 abc 0"),
            8,
            &["OFFSET", "expected a number, found 'abc'"],
        );
        assert_bvh_error(
            &good_with(19, "0 90 0 0 0 0 abc 20 30"),
            19,
            &["frame 1, value 7", "'Spine' Zrotation", "found 'abc'"],
        );
    }

    #[test]
    fn non_finite_values_are_rejected() {
        for bad in ["NaN", "nan", "inf", "-infinity", "1e999"] {
            let line = format!("0 91 0 1 {bad} 0 11 21 31");
            assert_bvh_error(
                &good_with(20, &line),
                20,
                &["frame 2, value 5", "expected a finite number", bad],
            );
        }
        assert_bvh_error(
            &good_with(4, "OFFSET 0 nan 0"),
            4,
            &["expected a finite number, found 'nan'"],
        );
        assert_bvh_error(
            &good_with(20, "0 1e300 0 1 0 0 11 21 31"),
            20,
            &["32-bit float range", "'1e300'"],
        );
    }

    #[test]
    fn missing_motion_section() {
        let hierarchy: String = GOOD.lines().take(15).map(|l| format!("{l}\n")).collect();
        assert_bvh_error(
            &hierarchy,
            16,
            &["missing MOTION section", "expected 'MOTION'"],
        );
        assert_bvh_error(
            &good_with(16, "MOTON"),
            16,
            &["expected 'ROOT' or 'MOTION', found 'MOTON'"],
        );
    }

    #[test]
    fn missing_or_bad_motion_headers() {
        assert_bvh_error(
            &good_with(17, "Frames: 0"),
            17,
            &["expected at least 1 frame", "Frames: 0"],
        );
        assert_bvh_error(
            &good_with(17, "Frames: -3"),
            17,
            &["expected a whole number of frames", "'-3'"],
        );
        assert_bvh_error(
            &good_with(17, "0 90 0 0 0 0 10 20 30"),
            17,
            &["expected a 'Frames: <count>' line", "found '0 90"],
        );
        assert_bvh_error(
            &good_with(18, "Frames: 3"),
            18,
            &["second 'Frames:' line (first on line 17)"],
        );
        assert_bvh_error(
            &good_with(18, "0 90 0 0 0 0 10 20 30"),
            18,
            &["expected a 'Frame Time: <seconds>' line"],
        );
    }

    #[test]
    fn huge_frame_count_fails_fast() {
        let start = std::time::Instant::now();
        assert_bvh_error(
            &good_with(17, "Frames: 1000000000000"),
            21,
            &["file ends after 3 of 1000000000000 frames"],
        );
        assert_bvh_error(
            &good_with(17, "Frames: 99999999999999999999999999"),
            17,
            &["expected a whole number of frames"],
        );
        assert!(start.elapsed().as_secs() < 5);
    }

    #[test]
    fn extra_frames_are_rejected() {
        let text = format!("{GOOD}\n  \n1 2 3 4 5 6 7 8 9\n");
        assert_bvh_error(
            &text,
            24,
            &["expected the end of the file after the 3 frames declared on line 17"],
        );
    }

    #[test]
    fn extra_frames_name_both_counts() {
        let text = format!("{GOOD}1 2 3 4 5 6 7 8 9\n\n1 2 3 4 5 6 7 8 9\n");
        assert_bvh_error(&text, 22, &["'Frames: 3'", "5 lines of data"]);
    }

    fn lenient(text: &str) -> Result<Clip> {
        parse_bvh_with(
            text,
            "test.bvh",
            &ImportOptions::default().with_lenient(true),
        )
    }

    #[test]
    fn lenient_keeps_every_extra_frame_line() {
        let text = format!("{GOOD}\n0 93 0 3 0 0 13 23 33\n0 94 0 4 0 0 14 24 34\n");
        let clip = lenient(&text).unwrap();
        assert_eq!(clip.num_samples(), 5);
        for (f, y) in [90.0, 91.0, 92.0, 93.0, 94.0].into_iter().enumerate() {
            assert_eq!(clip.pose(f)[0].translation.y, y, "frame {f}");
        }
        // Each extra line must still be a frame.
        let bad = format!("{GOOD}0 93 0 3 0 0 13 23\n");
        let err = lenient(&bad).unwrap_err().to_string();
        assert!(err.contains("line 22"), "{err}");
        assert!(
            err.contains("expected 9 values for frame 4, found 8"),
            "{err}"
        );
    }

    #[test]
    fn lenient_keeps_the_frames_present_when_fewer() {
        let cut: String = GOOD.lines().take(19).map(|l| format!("{l}\n")).collect();
        let clip = lenient(&cut).unwrap();
        assert_eq!(clip.num_samples(), 1);
        assert_eq!(clip.pose(0)[0].translation.y, 90.0);
        // At least one frame: none at all is still an error.
        let none: String = GOOD.lines().take(18).map(|l| format!("{l}\n")).collect();
        let err = lenient(&none).unwrap_err().to_string();
        assert!(err.contains("file ends after 0 of 3 frames"), "{err}");
        // A short line is not a frame, lenient or not.
        let half = &GOOD[..GOOD.len() - 7];
        let err = lenient(half).unwrap_err().to_string();
        assert!(
            err.contains("expected 9 values for frame 3, found 7"),
            "{err}"
        );
    }

    #[test]
    fn structural_errors() {
        // JOINT outside any ROOT.
        assert_bvh_error(
            "HIERARCHY\nJOINT Hips\n{\n}\n",
            2,
            &[
                "JOINT 'Hips' outside any ROOT",
                "expected 'ROOT' or 'MOTION'",
            ],
        );
        // Joint without OFFSET: reported on its JOINT line.
        let text = good_with(8, "");
        assert_bvh_error(
            &text,
            6,
            &["joint 'Spine' has no OFFSET", "closed on line 14"],
        );
        // Unbalanced braces.
        assert_bvh_error(
            &good_with(14, "  }\n}"),
            16,
            &["unbalanced '}'", "expected 'ROOT' or 'MOTION'"],
        );
        assert_bvh_error(
            &good_with(14, ""),
            16,
            &[
                "in joint 'Hips' (opened on line 2)",
                "found 'MOTION'",
                "missing '}'",
            ],
        );
        // Unexpected tokens.
        assert_bvh_error(
            &good_with(9, "    ROTATE 3"),
            9,
            &[
                "expected OFFSET, CHANNELS, JOINT, End Site or '}'",
                "'ROTATE'",
            ],
        );
        assert_bvh_error(
            &good_with(10, "    End Zone"),
            10,
            &["expected 'End Site', found 'End Zone'"],
        );
        assert_bvh_error(
            &good_with(12, "      CHANNELS 1 Xrotation"),
            12,
            &["End Site (opened on line 10)", "found 'CHANNELS'"],
        );
        assert_bvh_error(
            &good_with(7, "  OFFSET 1 2 3"),
            7,
            &["expected '{' after JOINT 'Spine'"],
        );
        assert_bvh_error("ROOT a\n", 1, &["expected 'HIERARCHY'", "'ROOT'"]);
        assert_bvh_error(
            &good_with(8, "OFFSET 0 10 0\nOFFSET 0 10 0"),
            9,
            &["second OFFSET for joint 'Spine'"],
        );
        assert_bvh_error(
            "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n\n",
            6,
            &["no channels"],
        );
    }

    #[test]
    fn lenient_layouts_parse() {
        // Braces on the header line, lowercase keywords, a BOM, trailing spaces.
        let text = "\u{feff}HIERARCHY  \nroot Hips {  \n offset 0 0 0\n channels 1 Yrotation\n \
                    end site {\n  offset 0 1 0\n }\n}\nmotion\nFrames: 1\nFrame Time: 0.1\n45\n";
        let clip = parse(text).unwrap();
        assert_eq!(clip.skeleton().bones()[0].name, "Hips");
        assert_eq!(clip.sample_rate(), 10.0);
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 60_000;
        let mut text = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n");
        for _ in 0..depth {
            text.push_str("JOINT j\n{\nOFFSET 0 1 0\n");
        }
        // Unclosed on purpose: must be an error, not a stack overflow.
        assert_bvh_error(&text, 3 * depth + 6, &["file ends inside joint 'j'"]);
    }

    #[test]
    fn never_panics_on_prefixes_and_garbage() {
        // Every prefix of a valid file is an error or a clip, never a panic.
        for end in 0..=SMALL.len() {
            if let Some(prefix) = SMALL.get(..end) {
                let _ = parse(prefix);
            }
        }
        for junk in [
            "{",
            "}",
            "HIERARCHY {",
            "HIERARCHY\nROOT\n",
            "HIERARCHY\nROOT a {\n}\n",
        ] {
            assert!(matches!(parse(junk), Err(Error::Bvh { .. })), "{junk:?}");
        }
    }
}
