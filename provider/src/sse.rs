//! Server-sent events as Chat Completions streams use them: the payloads of `data:` lines up to `data: [DONE]`.

use std::io::{self, BufRead};

/// How a stream ended without an error.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// `data: [DONE]`, the protocol's end.
    Done,
    /// The body ended first; `data_lines` tells whether it ever looked like a stream.
    Eof { data_lines: usize },
}

#[derive(Debug)]
pub(crate) enum SseError<E> {
    Io(io::Error),
    /// More than the limit was read before `[DONE]` (a single line over the limit included).
    TooLarge,
    NotUtf8 {
        line: usize,
    },
    /// The payload handler stopped the stream.
    Stopped(E),
}

/// Hands each `data:` payload to `on_data` until `[DONE]`. Tolerates `data:` without a space, `:` comments,
/// `event:`/`id:`/`retry:` lines, blank lines and CRLF. Each `data:` line is one chunk: Chat Completions
/// servers never split a chunk over several `data:` lines.
///
/// More than `limit` bytes in all is `TooLarge`, found before a line grows past what is left of the limit.
pub(crate) fn read_data_lines<E>(
    reader: &mut impl BufRead,
    limit: usize,
    mut on_data: impl FnMut(&str) -> Result<(), E>,
) -> Result<StreamEnd, SseError<E>> {
    let mut line = Vec::new();
    let mut consumed = 0usize;
    let mut line_number = 0usize;
    let mut data_lines = 0usize;
    loop {
        line.clear();
        read_line(reader, &mut line, limit - consumed)?;
        if line.is_empty() {
            return Ok(StreamEnd::Eof { data_lines });
        }
        consumed += line.len();
        line_number += 1;
        let mut text = line.as_slice();
        let complete = text.ends_with(b"\n");
        text = text.strip_suffix(b"\n").unwrap_or(text);
        text = text.strip_suffix(b"\r").unwrap_or(text);
        if line_number == 1 {
            text = text.strip_prefix("\u{feff}".as_bytes()).unwrap_or(text);
        }
        let Some(payload) = text.strip_prefix(b"data:") else {
            // Blank lines end events; comments and other fields carry nothing for us.
            continue;
        };
        data_lines += 1;
        let payload = payload.strip_prefix(b" ").unwrap_or(payload);
        let payload = std::str::from_utf8(payload).map_err(|_| SseError::NotUtf8 { line: line_number })?;
        if payload.trim() == "[DONE]" {
            return Ok(StreamEnd::Done);
        }
        if !complete {
            // The body ended inside this line: it is the cut, not a chunk to judge.
            return Ok(StreamEnd::Eof { data_lines: data_lines - 1 });
        }
        on_data(payload).map_err(SseError::Stopped)?;
    }
}

/// Appends one line (its `\n` included, unless the body ends first) to the empty `line`; a line longer than
/// `budget` is `TooLarge` before it is held whole, where `read_until` would have grown it without bound.
fn read_line<E>(reader: &mut impl BufRead, line: &mut Vec<u8>, budget: usize) -> Result<(), SseError<E>> {
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(SseError::Io(error)),
        };
        if available.is_empty() {
            return Ok(());
        }
        let (length, ends_line) = match available.iter().position(|&byte| byte == b'\n') {
            Some(newline) => (newline + 1, true),
            None => (available.len(), false),
        };
        if line.len() + length > budget {
            return Err(SseError::TooLarge);
        }
        line.extend_from_slice(&available[..length]);
        reader.consume(length);
        if ends_line {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn payloads(body: &[u8], limit: usize) -> (Vec<String>, Result<StreamEnd, SseError<()>>) {
        let mut seen = Vec::new();
        let mut reader = BufReader::with_capacity(8, body);
        let end = read_data_lines(&mut reader, limit, |data| {
            seen.push(data.to_string());
            Ok(())
        });
        (seen, end)
    }

    #[test]
    fn tolerates_the_variants_of_the_format() {
        let body = b"\xef\xbb\xbf: keep-alive\r\nevent: message\r\nid: 4\r\ndata: {\"a\":1}\r\n\r\ndata:{\"b\":2}\n\nretry: 10\ndata: [DONE]\n\ndata: after\n";
        let (seen, end) = payloads(body, 1 << 20);
        assert_eq!(seen, ["{\"a\":1}", "{\"b\":2}"]);
        assert_eq!(end.unwrap(), StreamEnd::Done);
    }

    #[test]
    fn a_body_without_done_is_cut() {
        let (seen, end) = payloads(b"data: 1\n\ndata: 2\n", 1 << 20);
        assert_eq!(seen, ["1", "2"]);
        assert_eq!(end.unwrap(), StreamEnd::Eof { data_lines: 2 });
        // A last line without its newline was cut inside: it is not handed on.
        let (seen, end) = payloads(b"data: 1\n\ndata: {\"cho", 1 << 20);
        assert_eq!(seen, ["1"]);
        assert_eq!(end.unwrap(), StreamEnd::Eof { data_lines: 1 });
        // `[DONE]` is unambiguous even without it.
        let (_, end) = payloads(b"data: 1\n\ndata: [DONE]", 1 << 20);
        assert_eq!(end.unwrap(), StreamEnd::Done);
    }

    #[test]
    fn a_long_line_is_too_large() {
        let mut body = b"data: ".to_vec();
        body.extend(std::iter::repeat_n(b'x', 100));
        let (_, end) = payloads(&body, 50);
        assert!(matches!(end, Err(SseError::TooLarge)));
        // Exactly at the limit is still fine.
        let (_, end) = payloads(b"data: [DONE]\n", 13);
        assert_eq!(end.unwrap(), StreamEnd::Done);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let (_, end) = payloads(b"data: 1\ndata: \xff\n", 1 << 20);
        assert!(matches!(end, Err(SseError::NotUtf8 { line: 2 })));
    }
}
