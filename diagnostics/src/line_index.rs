//! Byte offsets to 1-based lines and columns (columns count characters, docs/reference/diagnostics.md), and to
//! and from the 0-based positions of the Language Server Protocol, whose columns count
//! UTF-8 or UTF-16 code units as negotiated with the client.

/// What an LSP column counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes.
    Utf8,
    /// UTF-16 code units (a character outside the BMP counts two).
    Utf16,
    /// Characters (Unicode scalar values), as Python's strings count.
    Utf32,
}

impl Encoding {
    fn width(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
            Encoding::Utf32 => 1,
        }
    }
}

/// The start offset of every line of one text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| (i + 1) as u32));
        LineIndex { line_starts }
    }

    /// The 0-based line of `offset` (an offset past the end lies on the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start as usize <= offset) - 1
    }

    /// The offset where 0-based `line` starts.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts[line] as usize
    }

    /// 1-based line and column of `offset`; the column counts characters from the line start.
    /// An offset inside a multi-byte character counts as that character.
    pub fn line_col(&self, text: &str, offset: u32) -> (u32, u32) {
        let offset = offset.min(text.len() as u32);
        let line = self.line_of(offset as usize);
        let start = self.line_starts[line] as usize;
        let mut column = text.as_bytes()[start..offset as usize].iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        // A byte-order mark is not a character an editor shows.
        if line == 0 && text.starts_with('\u{feff}') && offset >= 3 {
            column -= 1;
        }
        (line as u32 + 1, column as u32 + 1)
    }

    /// Number of lines (a text ending in a line break has an empty last line).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 0-based line and column of `offset`, the column in code units of `encoding` (an LSP
    /// `Position`). Unlike [`LineIndex::line_col`], a byte-order mark counts: the client's
    /// text has it too. An offset inside a character counts as that character's start.
    pub fn position(&self, text: &str, offset: u32, encoding: Encoding) -> (u32, u32) {
        let offset = offset.min(text.len() as u32) as usize;
        let line = self.line_of(offset);
        let start = self.line_starts[line] as usize;
        let prefix = &text.as_bytes()[start..offset];
        let column = match encoding {
            Encoding::Utf8 => prefix.len() as u32,
            // Count per character start byte: 4-byte sequences are two UTF-16 units.
            Encoding::Utf16 => prefix
                .iter()
                .map(|&b| {
                    if b & 0xC0 == 0x80 {
                        0
                    } else if b >= 0xF0 {
                        2
                    } else {
                        1
                    }
                })
                .sum(),
            // One per character start byte.
            Encoding::Utf32 => prefix.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u32,
        };
        (line as u32, column)
    }

    /// Byte offset of an LSP position. A line past the end is the end of the text; a
    /// column past the end of its line is the line's end; a column inside a character is
    /// that character's start.
    pub fn offset(&self, text: &str, line: u32, column: u32, encoding: Encoding) -> u32 {
        let Some(&start) = self.line_starts.get(line as usize) else { return text.len() as u32 };
        let end = self.line_starts.get(line as usize + 1).map_or(text.len(), |&next| next as usize - 1);
        let mut offset = start as usize;
        let mut units = 0;
        for c in text[start as usize..end].chars() {
            let width = encoding.width(c);
            if units + width > column {
                break;
            }
            units += width;
            offset += c.len_utf8();
        }
        offset as u32
    }

    /// Byte range of line `line` (0-based), without its line break.
    pub fn line_range(&self, text: &str, line: usize) -> std::ops::Range<usize> {
        let start = self.line_starts[line] as usize;
        let end = self.line_starts.get(line + 1).map(|&next| next as usize - 1).unwrap_or(text.len());
        let end = if end > start && text.as_bytes()[end - 1] == b'\r' { end - 1 } else { end };
        start..end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_character_columns() {
        let text = "ab\n\u{e9}x\ny";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 0), (1, 1));
        assert_eq!(index.line_col(text, 1), (1, 2));
        assert_eq!(index.line_col(text, 3), (2, 1));
        // `x` follows a two-byte character: byte 5, column 2.
        assert_eq!(index.line_col(text, 5), (2, 2));
        assert_eq!(index.line_col(text, 7), (3, 1));
        assert_eq!(index.line_col(text, 99), (3, 2));
    }

    #[test]
    fn lsp_positions_in_both_encodings() {
        // `é` is 2 bytes and 1 UTF-16 unit; `𝄞` is 4 bytes and 2 UTF-16 units.
        let text = "ab\n\u{e9}\u{1d11e}x\ny";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(index.position(text, x, Encoding::Utf8), (1, 6));
        assert_eq!(index.position(text, x, Encoding::Utf16), (1, 3));
        assert_eq!(index.offset(text, 1, 6, Encoding::Utf8), x);
        assert_eq!(index.offset(text, 1, 3, Encoding::Utf16), x);
        // Inside the surrogate pair, and past the line's end.
        assert_eq!(index.offset(text, 1, 2, Encoding::Utf16), x - 4);
        assert_eq!(index.offset(text, 1, 99, Encoding::Utf16), x + 1);
        assert_eq!(index.offset(text, 7, 0, Encoding::Utf8), text.len() as u32);
        for offset in [0, 1, 3, 5, 9, 10, 11, 12] {
            for encoding in [Encoding::Utf8, Encoding::Utf16] {
                let (line, column) = index.position(text, offset, encoding);
                assert_eq!(index.offset(text, line, column, encoding), offset, "{offset} {encoding:?}");
            }
        }
    }

    #[test]
    fn a_byte_order_mark_is_not_a_column() {
        let text = "\u{feff}{}";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 3), (1, 1));
        assert_eq!(index.line_col(text, 4), (1, 2));
    }
}
