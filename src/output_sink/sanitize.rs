//! Terminal output made safe to store and show, chunk by chunk: escape sequences removed
//! (CSI `ESC [ … final`; OSC `ESC ]`, DCS `ESC P`, APC `ESC _` (kitty images), PM `ESC ^`
//! and SOS `ESC X` up to BEL or `ESC \`; any other `ESC x` pair), CRLF and a lone CR
//! turned into LF, other control characters but tab dropped.
//!
//! The state carries over from one chunk to the next, so a sequence or a CRLF that a
//! shell splits across two chunks is removed or joined as if it came in one piece.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Text,
    /// After ESC.
    Escape,
    /// In `ESC [`, up to the final byte.
    Csi,
    /// In a string sequence (OSC, DCS, APC, PM, SOS), up to BEL or `ESC \`.
    Str,
    /// ESC inside a string sequence: `\` ends it.
    StrEscape,
    /// After CR: LF or not, it is one newline.
    Cr,
}

/// The streaming sanitizer.
#[derive(Debug, Clone, Default)]
pub struct Sanitizer {
    state: State,
}

impl Sanitizer {
    pub fn new() -> Self {
        Self::default()
    }

    /// The clean text of `chunk`; what a sequence still open at its end needs is kept.
    pub fn feed(&mut self, chunk: &str) -> String {
        let mut out = String::with_capacity(chunk.len());
        for c in chunk.chars() {
            self.step(c, &mut out);
        }
        out
    }

    /// The end of the output: a final CR is a newline; an unfinished sequence is dropped.
    pub fn finish(&mut self) -> String {
        let state = std::mem::take(&mut self.state);
        if state == State::Cr {
            "\n".to_string()
        } else {
            String::new()
        }
    }

    fn step(&mut self, c: char, out: &mut String) {
        self.state = match (self.state, c) {
            (State::Cr, '\n') => {
                out.push('\n');
                State::Text
            }
            (State::Cr, c) => {
                out.push('\n');
                self.state = State::Text;
                return self.step(c, out);
            }
            (State::Escape, '[') => State::Csi,
            (State::Escape, ']' | 'P' | '_' | '^' | 'X') => State::Str,
            (State::Escape, _) => State::Text,
            (State::Csi, c) if ('@'..='~').contains(&c) => State::Text,
            (State::Csi, _) => State::Csi,
            (State::Str, '\u{7}') => State::Text,
            (State::Str, '\u{1b}') => State::StrEscape,
            (State::Str, _) => State::Str,
            (State::StrEscape, '\\') => State::Text,
            (State::StrEscape, _) => State::Str,
            (State::Text, '\u{1b}') => State::Escape,
            (State::Text, '\r') => State::Cr,
            (State::Text, c) => {
                if c == '\n' || c == '\t' || !c.is_control() {
                    out.push(c);
                }
                State::Text
            }
        };
    }
}

/// [`Sanitizer`] over one whole text.
pub fn sanitize_chunk(text: &str) -> String {
    let mut s = Sanitizer::new();
    let mut out = s.feed(text);
    out.push_str(&s.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_ansi_and_normalizes_newlines() {
        assert_eq!(
            sanitize_chunk("\u{1b}[31mred\u{1b}[0m\r\nnext\rover\u{1b}]0;title\u{7}\u{0}!"),
            "red\nnext\nover!"
        );
    }

    #[test]
    fn image_and_device_strings_leave_no_payload_behind() {
        assert_eq!(
            sanitize_chunk("a\u{1b}_Gf=100;iVBORw0KGgo=\u{1b}\\b\u{1b}P1$r0m\u{1b}\\c"),
            "abc"
        );
    }

    #[test]
    fn a_sequence_or_crlf_split_across_chunks_is_handled_as_one() {
        let whole = "\u{1b}[1;31mbold red\u{1b}[0m\r\nok\u{1b}]8;;http://x\u{7}link\r\n";
        let expected = sanitize_chunk(whole);
        assert_eq!(expected, "bold red\noklink\n");
        // Every split point, every char boundary.
        let cuts: Vec<usize> = (0..=whole.len())
            .filter(|i| whole.is_char_boundary(*i))
            .collect();
        for &i in &cuts {
            let mut s = Sanitizer::new();
            let mut out = s.feed(&whole[..i]);
            out.push_str(&s.feed(&whole[i..]));
            out.push_str(&s.finish());
            assert_eq!(out, expected, "split at {i}");
        }
    }

    #[test]
    fn a_final_cr_is_a_newline_and_an_open_sequence_is_dropped() {
        let mut s = Sanitizer::new();
        assert_eq!(s.feed("done\r"), "done");
        assert_eq!(s.finish(), "\n");
        let mut s = Sanitizer::new();
        assert_eq!(s.feed("x\u{1b}[31"), "x");
        assert_eq!(s.finish(), "");
    }
}
