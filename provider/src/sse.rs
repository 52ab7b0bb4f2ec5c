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
    NotUtf8 { line: usize },
    /// The payload handler stopped the stream.
    Stopped(E),
}

/// Hands each `data:` payload to `on_data` until `[DONE]`. Tolerates `data:` without a space, `:` comments,
/// `event:`/`id:`/`retry:` lines, blank lines and CRLF. Each `data:` line is one chunk: Chat Completions
/// servers never split a chunk over several `data:` lines.
///
/// `reader` must not yield more than `limit + 1` bytes (wrap it in `take`), so that no line, however long,
/// grows past the limit in memory.
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
        let read = reader.read_until(b'\n', &mut line).map_err(SseError::Io)?;
        if read == 0 {
            return Ok(StreamEnd::Eof { data_lines });
        }
        consumed = consumed.saturating_add(read);
        if consumed > limit {
            return Err(SseError::TooLarge);
        }
        line_number += 1;
        let mut text = line.as_slice();
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
        on_data(payload).map_err(SseError::Stopped)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    fn payloads(body: &[u8], limit: usize) -> (Vec<String>, Result<StreamEnd, SseError<()>>) {
        let mut seen = Vec::new();
        let mut reader = BufReader::with_capacity(8, body.take(limit as u64 + 1));
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
        let (seen, end) = payloads(b"data: 1\n\ndata: 2", 1 << 20);
        assert_eq!(seen, ["1", "2"]);
        assert_eq!(end.unwrap(), StreamEnd::Eof { data_lines: 2 });
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
