//! SJSON, the "simplified JSON" ACL writes its raw clips in, parsed into a
//! tree whose every value knows its line.
//!
//! The grammar is sjson-cpp's, read loosely where that costs nothing: the
//! document is the body of an object (no outer braces); keys are bare words
//! or quoted strings, followed by `=` (or `:`); commas between values and
//! between members are optional; `//` and `/* */` comments are whitespace;
//! numbers are JSON's (plus a trailing `.` and hexadecimal integers); strings keep their escapes as written, as
//! sjson-cpp's views do, except `\"` and `\\`. A byte-order mark is skipped.
//!
//! Bounded: nesting deeper than [`MAX_DEPTH`] is refused, a number longer
//! than 64 characters is refused (as sjson-cpp does), and the tree holds at
//! most one value per byte of input. Arrays of numbers are stored flat.

use std::fmt;

/// Deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 64;

/// Longest number, in characters (sjson-cpp's limit).
const MAX_NUMBER_LEN: usize = 64;

/// A value and the 1-based line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub line: usize,
    pub value: Value,
}

/// An SJSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    /// An array whose elements are all numbers (or empty).
    Numbers(Vec<f64>),
    Array(Vec<Node>),
    /// Members in file order; each key once.
    Object(Vec<(String, Node)>),
}

impl Value {
    /// A few words for messages: what was found.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Numbers(_) | Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// A syntax error: where and what.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses a whole document: the members of its top-level object.
pub fn parse(text: &str) -> Result<Vec<(String, Node)>, SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut p = Parser {
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    p.members(None, 0)
}

/// A comment or string that runs to the end of input, at the line it opens.
fn never_closed<T>(line: usize, what: &str) -> Result<T, SyntaxError> {
    Err(SyntaxError {
        line,
        message: format!("{what} opened here is never closed"),
    })
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl Parser<'_> {
    fn error<T>(&self, message: impl Into<String>) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            line: self.line,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line += 1;
        }
        self.pos += 1;
    }

    /// Skips whitespace, comments and (optional) commas when `commas`.
    fn skip(&mut self, commas: bool) -> Result<(), SyntaxError> {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => self.bump(),
                b',' if commas => self.bump(),
                b'/' => {
                    let start = self.line;
                    match self.bytes.get(self.pos + 1) {
                        Some(b'/') => {
                            while self.peek().is_some_and(|c| c != b'\n') {
                                self.bump();
                            }
                        }
                        Some(b'*') => {
                            self.bump();
                            self.bump();
                            loop {
                                match self.peek() {
                                    None => return never_closed(start, "comment"),
                                    Some(b'*') if self.bytes.get(self.pos + 1) == Some(&b'/') => {
                                        self.bump();
                                        self.bump();
                                        break;
                                    }
                                    Some(_) => self.bump(),
                                }
                            }
                        }
                        _ => return self.error("'/' that starts no comment (// or /*)"),
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    /// Members up to `close` (`}`), or to the end of input when `None`.
    fn members(
        &mut self,
        close: Option<u8>,
        depth: usize,
    ) -> Result<Vec<(String, Node)>, SyntaxError> {
        let mut members: Vec<(String, Node)> = Vec::new();
        loop {
            self.skip(true)?;
            match (self.peek(), close) {
                (None, None) => return Ok(members),
                (None, Some(_)) => return self.error("input ends inside an object: '}' expected"),
                (Some(c), Some(close)) if c == close => {
                    self.bump();
                    return Ok(members);
                }
                _ => {}
            }
            let key_line = self.line;
            let key = self.key()?;
            self.skip(false)?;
            match self.peek() {
                Some(b'=' | b':') => self.bump(),
                _ => return self.error(format!("'=' expected after key '{key}'")),
            }
            let value = self.value(depth)?;
            if members.iter().any(|(k, _)| *k == key) {
                return Err(SyntaxError {
                    line: key_line,
                    message: format!("key '{key}' given twice in one object"),
                });
            }
            members.push((key, value));
        }
    }

    fn key(&mut self) -> Result<String, SyntaxError> {
        if self.peek() == Some(b'"') {
            return self.string();
        }
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.' || c >= 0x80 {
                self.bump();
            } else {
                break;
            }
        }
        if self.pos == start {
            return match self.peek() {
                Some(c) => self.error(format!("a key expected, found '{}'", c.escape_ascii())),
                None => self.error("a key expected, found the end of input"),
            };
        }
        Ok(String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned())
    }

    /// A quoted string; the cursor is on its opening quote.
    fn string(&mut self) -> Result<String, SyntaxError> {
        let start_line = self.line;
        self.bump();
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return never_closed(start_line, "string"),
                Some(b'"') => {
                    self.bump();
                    break;
                }
                Some(b'\\') => {
                    self.bump();
                    match self.peek() {
                        Some(c @ (b'"' | b'\\')) => out.push(c),
                        // Kept as written, as sjson-cpp's views keep them.
                        Some(c) => out.extend([b'\\', c]),
                        None => continue,
                    }
                    self.bump();
                }
                Some(c) => {
                    out.push(c);
                    self.bump();
                }
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        self.skip(false)?;
        let line = self.line;
        let value = match self.peek() {
            None => return self.error("a value expected, found the end of input"),
            Some(b'{') | Some(b'[') if depth >= MAX_DEPTH => {
                return self.error(format!("nested deeper than {MAX_DEPTH} levels"))
            }
            Some(b'{') => {
                self.bump();
                Value::Object(self.members(Some(b'}'), depth + 1)?)
            }
            Some(b'[') => {
                self.bump();
                self.array(depth + 1)?
            }
            // sjson-cpp's "nan", "inf" and "-inf" stay strings: a clip
            // refuses values that are not finite anyway.
            Some(b'"') => Value::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => Value::Number(self.number()?),
            Some(c) if c.is_ascii_alphabetic() => self.word()?,
            Some(c) => {
                return self.error(format!("a value expected, found '{}'", c.escape_ascii()))
            }
        };
        Ok(Node { line, value })
    }

    fn array(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        let mut numbers = Vec::new();
        let mut nodes: Option<Vec<Node>> = None;
        loop {
            self.skip(true)?;
            match self.peek() {
                None => return self.error("input ends inside an array: ']' expected"),
                Some(b']') => {
                    self.bump();
                    return Ok(match nodes {
                        Some(nodes) => Value::Array(nodes),
                        None => Value::Numbers(numbers),
                    });
                }
                _ => {}
            }
            let node = self.value(depth)?;
            match (&mut nodes, node.value) {
                (None, Value::Number(x)) => numbers.push(x),
                (None, value) => {
                    let line = node.line;
                    let mut all: Vec<Node> = numbers
                        .drain(..)
                        .map(|x| Node {
                            line,
                            value: Value::Number(x),
                        })
                        .collect();
                    all.push(Node { line, value });
                    nodes = Some(all);
                }
                (Some(all), value) => all.push(Node {
                    line: node.line,
                    value,
                }),
            }
        }
    }

    fn number(&mut self) -> Result<f64, SyntaxError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let from = p.pos;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.bump();
            }
            p.pos - from
        };
        if self.peek() == Some(b'-') {
            self.bump();
        }
        let hex =
            self.peek() == Some(b'0') && matches!(self.bytes.get(self.pos + 1), Some(b'x' | b'X'));
        if hex {
            self.bump();
            self.bump();
            let from = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.bump();
            }
            let text = std::str::from_utf8(&self.bytes[from..self.pos]).unwrap_or("");
            if text.len() > 16 || text.is_empty() {
                return self.error("a hexadecimal number of 1 to 16 digits expected");
            }
            let magnitude = u64::from_str_radix(text, 16).unwrap_or(0) as f64;
            return Ok(if self.bytes[start] == b'-' {
                -magnitude
            } else {
                magnitude
            });
        }
        if digits(self) == 0 {
            return self.error("a digit expected in a number");
        }
        if self.peek() == Some(b'.') {
            self.bump();
            digits(self);
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.bump();
            }
            if digits(self) == 0 {
                return self.error("a digit expected in a number's exponent");
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap_or("");
        if text.len() >= MAX_NUMBER_LEN {
            return self.error(format!("a number of {} characters or more", MAX_NUMBER_LEN));
        }
        // Rust's grammar takes "1." and "-0"; what the scan let through parses.
        match text.parse::<f64>() {
            Ok(x) => Ok(x),
            Err(_) => self.error(format!("'{text}' is not a number")),
        }
    }

    fn word(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.bump();
        }
        match &self.bytes[start..self.pos] {
            b"true" => Ok(Value::Bool(true)),
            b"false" => Ok(Value::Bool(false)),
            b"null" => Ok(Value::Null),
            other => self.error(format!(
                "a value expected, found '{}'",
                other.escape_ascii()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_style_document() {
        let doc = "version = 5\n// a comment\nclip =\n{\n\tname = \"a \\\"b\\\"\"\n\tx: 1.5e1, y = -0.\n}\n\
                   /* block\n comment */ data = [ [ 1, 2 ] [ 3 4 ] ]\nflags = [ true, null, \"nan\" ]\n";
        let members = parse(doc).unwrap();
        assert_eq!(members[0].0, "version");
        assert_eq!(members[0].1.value, Value::Number(5.0));
        let Value::Object(clip) = &members[1].1.value else {
            panic!("{members:?}")
        };
        assert_eq!(members[1].1.line, 4);
        assert_eq!(clip[0].1.value, Value::String("a \"b\"".into()));
        assert_eq!(clip[1].1.value, Value::Number(15.0));
        assert_eq!(clip[2].1.value, Value::Number(-0.0));
        let Value::Array(data) = &members[2].1.value else {
            panic!()
        };
        assert_eq!(data[1].value, Value::Numbers(vec![3.0, 4.0]));
        assert_eq!(members[2].1.line, 9);
        let Value::Array(flags) = &members[3].1.value else {
            panic!()
        };
        assert_eq!(flags[0].value, Value::Bool(true));
        assert_eq!(flags[1].value, Value::Null);
        assert_eq!(flags[2].value, Value::String("nan".into()));
    }

    #[test]
    fn errors_name_their_line() {
        let cases: [(&str, usize, &str); 9] = [
            ("a = 1\nb = [1, 2\n", 3, "']' expected"),
            ("a = 1\nb = { c = 1\n", 3, "'}' expected"),
            ("a = 1\n\nb 1\n", 3, "'=' expected"),
            ("a = 1\nb = \"open\n\n", 2, "never closed"),
            ("a = 1\n/* open\n", 2, "never closed"),
            ("a = 1\nb = 1e\n", 2, "exponent"),
            ("a = 1\nb = yes\n", 2, "'yes'"),
            ("a = 1\nb = 2\na = 3\n", 3, "twice"),
            ("a = 1\nb = /x\n", 2, "no comment"),
        ];
        for (text, line, words) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(words), "{text:?}: {e}");
        }
        let deep = format!(
            "a = {}{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert!(parse(&deep).unwrap_err().message.contains("deeper"));
        let long = format!("a = 1{}", "0".repeat(70));
        assert!(parse(&long).unwrap_err().message.contains("64"));
    }
}
