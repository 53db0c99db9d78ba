//! Lines and tokens: BVH text split into numbered lines (`\n`, `\r\n` or a
//! lone `\r`) and whitespace-separated tokens, with the rest of a line for
//! line-based statements.

/// Splits text into numbered lines, accepting `\n`, `\r\n` and lone `\r`.
pub(super) struct Lines<'a> {
    text: &'a str,
    pos: usize,
    /// Number of the line starting at `pos`; once exhausted, the line the end
    /// of the file is on.
    pub(super) line: usize,
}

impl<'a> Lines<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Lines {
            text,
            pos: 0,
            line: 1,
        }
    }

    pub(super) fn next_line(&mut self) -> Option<(usize, &'a str)> {
        let rest = self.text.get(self.pos..).filter(|r| !r.is_empty())?;
        let number = self.line;
        let bytes = rest.as_bytes();
        match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(end) => {
                let crlf = bytes.get(end) == Some(&b'\r') && bytes.get(end + 1) == Some(&b'\n');
                self.pos += end + if crlf { 2 } else { 1 };
                self.line += 1;
                // `end` is at an ASCII byte, hence a char boundary.
                Some((number, rest.get(..end).unwrap_or(rest)))
            }
            None => {
                self.pos = self.text.len();
                Some((number, rest))
            }
        }
    }

    pub(super) fn next_nonblank(&mut self) -> Option<(usize, &'a str)> {
        loop {
            let (number, line) = self.next_line()?;
            if !line.trim().is_empty() {
                return Some((number, line));
            }
        }
    }

    /// Bytes not yet consumed.
    pub(super) fn remaining(&self) -> usize {
        self.text.len().saturating_sub(self.pos)
    }
}

/// Whitespace-separated tokens over [`Lines`], with access to the rest of the
/// current line for statements that are line-based (names, OFFSET, CHANNELS).
pub(super) struct Lexer<'a> {
    pub(super) lines: Lines<'a>,
    pub(super) line: usize,
    rest: &'a str,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Lexer {
            lines: Lines::new(text),
            line: 1,
            rest: "",
        }
    }

    pub(super) fn token(&mut self) -> Option<(usize, &'a str)> {
        loop {
            let trimmed = self.rest.trim_start();
            if !trimmed.is_empty() {
                let end = trimmed.find(char::is_whitespace).unwrap_or(trimmed.len());
                let (token, rest) = trimmed.split_at(end);
                self.rest = rest;
                return Some((self.line, token));
            }
            let (line, text) = self.lines.next_line()?;
            self.line = line;
            self.rest = text;
        }
    }

    pub(super) fn rest_of_line(&mut self) -> &'a str {
        std::mem::take(&mut self.rest).trim()
    }

    /// The line the end of the file is on, once tokens have run out.
    pub(super) fn eof_line(&self) -> usize {
        self.lines.line
    }
}
