//! Terminal output made safe to store and show, chunk by chunk, as the agent's
//! `sanitizeText` does: escape sequences removed (CSI `ESC [ … final`; OSC `ESC ]`, DCS
//! `ESC P`, APC `ESC _`, PM `ESC ^` and SOS `ESC X` up to BEL or `ESC \`; any other `ESC x`
//! pair), every CR removed (CRLF becomes LF, a lone CR joins the two sides, as a progress
//! bar's `10%\r100%` becomes `10%100%`), other control characters but tab and LF dropped.
//!
//! When the terminal shows images, image sequences are kept whole instead (the agent's
//! `sanitizeWithImagePassthrough`): SIXEL `ESC P [0-9;]* q … (ESC \ | BEL)`, iTerm2
//! `ESC ]1337;File=|MultipartFile=|FilePart=|FileEnd … (BEL | ESC \)` and kitty
//! `ESC _G … ESC \`. One is held until its end, so it is kept only complete.
//!
//! The state carries over from one chunk to the next, so a sequence that a shell splits
//! across two chunks is removed (or kept) as if it came in one piece.

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
    /// The start of a string sequence that may be an image (held).
    Intro,
    /// In an image sequence (held).
    Image(Image),
    /// ESC inside an image sequence.
    ImageEscape(Image),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Image {
    Sixel,
    Iterm2,
    Kitty,
}

/// What the held start of a string sequence says.
enum Intro {
    Image(Image),
    Undecided,
    NotAnImage,
}

const ITERM2_INTROS: [&str; 4] = [
    "1337;File=",
    "1337;MultipartFile=",
    "1337;FilePart=",
    "1337;FileEnd",
];

fn intro(held: &str) -> Intro {
    let (kind, rest) = held.split_at(2.min(held.len()));
    match kind {
        "\u{1b}P" => match rest.strip_suffix('q') {
            Some(params) if params.bytes().all(|b| b.is_ascii_digit() || b == b';') => {
                Intro::Image(Image::Sixel)
            }
            _ if rest.bytes().all(|b| b.is_ascii_digit() || b == b';') => Intro::Undecided,
            _ => Intro::NotAnImage,
        },
        "\u{1b}]" if ITERM2_INTROS.contains(&rest) => Intro::Image(Image::Iterm2),
        "\u{1b}]" if ITERM2_INTROS.iter().any(|i| i.starts_with(rest)) => Intro::Undecided,
        "\u{1b}_" if rest == "G" => Intro::Image(Image::Kitty),
        "\u{1b}_" if rest.is_empty() => Intro::Undecided,
        _ => Intro::NotAnImage,
    }
}

/// The streaming sanitizer.
#[derive(Debug, Clone, Default)]
pub struct Sanitizer {
    state: State,
    /// Keep image sequences of at most this many bytes (a longer one is dropped).
    images: Option<usize>,
    /// The image sequence (or the start of a string sequence that may be one) so far.
    held: String,
}

impl Sanitizer {
    /// A sanitizer that drops every escape sequence.
    pub fn new() -> Self {
        Self::default()
    }

    /// A sanitizer that keeps image sequences (the terminal shows images) of at most
    /// `max_bytes` each; a longer one is dropped, so what is held stays bounded.
    pub fn keeping_images(max_bytes: usize) -> Self {
        Sanitizer {
            images: Some(max_bytes),
            ..Self::default()
        }
    }

    /// The clean text of `chunk`; what a sequence still open at its end needs is kept.
    pub fn feed(&mut self, chunk: &str) -> String {
        let mut out = String::with_capacity(chunk.len());
        for c in chunk.chars() {
            self.step(c, &mut out);
        }
        out
    }

    /// The end of the output: a sequence still open (an image included) is dropped.
    pub fn finish(&mut self) {
        self.state = State::Text;
        self.held.clear();
    }

    fn step(&mut self, c: char, out: &mut String) {
        self.state = match (self.state, c) {
            (State::Escape, ']' | 'P' | '_') if self.images.is_some() => {
                self.held.push('\u{1b}');
                self.held.push(c);
                State::Intro
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
            (State::Intro, c) => {
                self.held.push(c);
                match intro(&self.held) {
                    Intro::Image(kind) => State::Image(kind),
                    Intro::Undecided if self.held.len() <= 64 => State::Intro,
                    _ => {
                        // An ordinary string sequence: dropped, `c` included.
                        self.held.clear();
                        self.state = State::Str;
                        return self.step(c, out);
                    }
                }
            }
            (State::Image(kind), c) => {
                self.held.push(c);
                match (kind, c) {
                    (Image::Sixel | Image::Iterm2, '\u{7}') => self.release(out),
                    (_, '\u{1b}') => State::ImageEscape(kind),
                    _ => State::Image(kind),
                }
            }
            (State::ImageEscape(_), '\\') => {
                self.held.push(c);
                self.release(out)
            }
            (State::ImageEscape(Image::Kitty), c) => {
                // Kitty's payload has no ESC: not an image after all.
                self.held.clear();
                self.state = State::Str;
                return self.step(c, out);
            }
            (State::ImageEscape(kind), c) => {
                self.state = State::Image(kind);
                return self.step(c, out);
            }
            (State::Text, '\u{1b}') => State::Escape,
            (State::Text, c) => {
                if c == '\n' || c == '\t' || !c.is_control() {
                    out.push(c);
                }
                State::Text
            }
        };
        if let (State::Image(_) | State::ImageEscape(_), Some(max)) = (self.state, self.images) {
            if self.held.len() > max {
                // Too long to keep whole: dropped like any other sequence.
                self.held.clear();
                self.state = match self.state {
                    State::ImageEscape(_) => State::StrEscape,
                    _ => State::Str,
                };
            }
        }
    }

    /// A complete image sequence goes out as it came.
    fn release(&mut self, out: &mut String) -> State {
        out.push_str(&self.held);
        self.held.clear();
        State::Text
    }
}

/// [`Sanitizer`] over one whole text.
pub fn sanitize_chunk(text: &str) -> String {
    Sanitizer::new().feed(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `whole` fed in two pieces at every char boundary gives what it gives in one.
    fn same_at_every_split(make: impl Fn() -> Sanitizer, whole: &str, expected: &str) {
        for i in (0..=whole.len()).filter(|i| whole.is_char_boundary(*i)) {
            let mut s = make();
            let mut out = s.feed(&whole[..i]);
            out.push_str(&s.feed(&whole[i..]));
            s.finish();
            assert_eq!(out, expected, "split at {i}");
        }
    }

    #[test]
    fn strips_ansi_and_removes_every_cr() {
        assert_eq!(
            sanitize_chunk("\u{1b}[31mred\u{1b}[0m\r\nnext\rover\u{1b}]0;title\u{7}\u{0}!"),
            "red\nnextover!"
        );
    }

    #[test]
    fn a_lone_cr_joins_its_two_sides_as_the_agent_does() {
        assert_eq!(sanitize_chunk("10%\r100%"), "10%100%");
        assert_eq!(sanitize_chunk("done\r"), "done");
    }

    #[test]
    fn image_and_device_strings_leave_no_payload_behind() {
        assert_eq!(
            sanitize_chunk(
                "a\u{1b}_Gf=100;iVBORw0KGgo=\u{1b}\\b\u{1b}P1$r0m\u{1b}\\c\u{1b}Pqabc\u{1b}\\d"
            ),
            "abcd"
        );
    }

    #[test]
    fn a_sequence_or_crlf_split_across_chunks_is_handled_as_one() {
        let whole = "\u{1b}[1;31mbold red\u{1b}[0m\r\nok\u{1b}]8;;http://x\u{7}link\r\n";
        assert_eq!(sanitize_chunk(whole), "bold red\noklink\n");
        same_at_every_split(Sanitizer::new, whole, "bold red\noklink\n");
    }

    #[test]
    fn an_open_sequence_at_the_end_is_dropped() {
        let mut s = Sanitizer::new();
        assert_eq!(s.feed("x\u{1b}[31"), "x");
        s.finish();
        assert_eq!(s.feed("y"), "y");
    }

    #[test]
    fn when_the_terminal_shows_images_sixel_iterm2_and_kitty_sequences_are_kept() {
        let sixel = "\u{1b}P0;1qabc\r\n-\u{1b}\\";
        let sixel_bel = "\u{1b}Pq#0\u{7}";
        let iterm2 = "\u{1b}]1337;File=inline=1:iVBOR\u{7}";
        let part = "\u{1b}]1337;FilePart=AAAA\u{1b}\\";
        let kitty = "\u{1b}_Ga=T,f=100;iVBOR\u{1b}\\";
        let whole = format!(
            "a{sixel}b{sixel_bel}c{iterm2}d{part}e{kitty}\u{1b}]0;title\u{7}\u{1b}[1mf\r\n"
        );
        let expected = format!("a{sixel}b{sixel_bel}c{iterm2}d{part}e{kitty}f\n");
        assert_eq!(Sanitizer::keeping_images(1000).feed(&whole), expected);
        same_at_every_split(|| Sanitizer::keeping_images(1000), &whole, &expected);
        assert_eq!(
            sanitize_chunk(&whole),
            "abcdef\n",
            "without images: all dropped"
        );
    }

    #[test]
    fn an_image_kept_only_whole_and_within_its_bound() {
        let mut s = Sanitizer::keeping_images(1000);
        assert_eq!(s.feed("a\u{1b}Pqabc"), "a", "held until its end");
        s.finish();
        assert_eq!(s.feed("b"), "b", "an unfinished image is dropped");
        let big = format!("\u{1b}_G{}\u{1b}\\ok", "A".repeat(2000));
        assert_eq!(Sanitizer::keeping_images(1000).feed(&big), "ok");
        let other = "\u{1b}]1337;SetMark\u{7}\u{1b}P1$r0m\u{1b}\\\u{1b}_Xq\u{1b}\\ok";
        assert_eq!(
            Sanitizer::keeping_images(1000).feed(other),
            "ok",
            "not images"
        );
    }
}
