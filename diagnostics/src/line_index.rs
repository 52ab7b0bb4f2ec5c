//! Byte offsets to 1-based lines and columns (columns count characters, SPEC §3).

/// The start offset of every line of one text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| (i + 1) as u32));
        LineIndex { line_starts }
    }

    /// 1-based line and column of `offset`; the column counts characters from the line start.
    /// An offset inside a multi-byte character counts as that character.
    pub fn line_col(&self, text: &str, offset: u32) -> (u32, u32) {
        let offset = offset.min(text.len() as u32);
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let start = self.line_starts[line] as usize;
        let mut column = text.as_bytes()[start..offset as usize].iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        // A byte-order mark is not a character an editor shows.
        if line == 0 && text.starts_with('\u{feff}') && offset >= 3 {
            column -= 1;
        }
        (line as u32 + 1, column as u32 + 1)
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
    fn a_byte_order_mark_is_not_a_column() {
        let text = "\u{feff}{}";
        let index = LineIndex::new(text);
        assert_eq!(index.line_col(text, 3), (1, 1));
        assert_eq!(index.line_col(text, 4), (1, 2));
    }
}
