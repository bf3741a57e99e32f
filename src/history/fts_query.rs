//! The FTS5 query language, as far as [`MemoryHistory`](super::MemoryHistory) understands
//! it: the syntax tree, the lexer and the parser (errors worded like SQLite's).

use super::query::tokenize;

/// A sequence of terms that must appear consecutively; a prefix term matches any
/// token it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    pub terms: Vec<(String, bool)>,
    /// `^`: must start at the first token.
    pub initial: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Phrase(Phrase),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>, Box<Expr>),
    /// NEAR(...): approximated as all phrases present (the distance is ignored).
    Near(Vec<Phrase>),
    /// A column filter that excludes the only column: matches nothing.
    Nothing,
    /// An empty phrase (`""`): FTS5 drops it from the expression; alone it matches
    /// nothing.
    Empty,
}

impl Expr {
    pub fn and(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::Empty, x) | (x, Expr::Empty) => x,
            (a, b) => Expr::And(Box::new(a), Box::new(b)),
        }
    }

    pub fn or(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::Empty, x) | (x, Expr::Empty) => x,
            (a, b) => Expr::Or(Box::new(a), Box::new(b)),
        }
    }

    pub fn not(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::Empty, _) => Expr::Empty,
            (a, Expr::Empty) => a,
            (a, b) => Expr::Not(Box::new(a), Box::new(b)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Str(String),
    Word(String),
    Star,
    Plus,
    Caret,
    LParen,
    RParen,
    Colon,
    Comma,
    LBrace,
    RBrace,
    Minus,
}

fn bareword_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '\u{1a}' || !c.is_ascii()
}

fn syntax(near: &str) -> String {
    format!("fts5: syntax error near \"{near}\"")
}

fn lex(q: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = q.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let tok = match c {
            c if c.is_whitespace() => continue,
            '"' => {
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some((_, '"')) if matches!(chars.peek(), Some((_, '"'))) => {
                            chars.next();
                            s.push('"');
                        }
                        Some((_, '"')) => break,
                        Some((_, ch)) => s.push(ch),
                        None => return Err("unterminated string".to_string()),
                    }
                }
                Tok::Str(s)
            }
            '*' => Tok::Star,
            '+' => Tok::Plus,
            '^' => Tok::Caret,
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            ':' => Tok::Colon,
            ',' => Tok::Comma,
            '{' => Tok::LBrace,
            '}' => Tok::RBrace,
            '-' => Tok::Minus,
            c if bareword_char(c) => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if !bareword_char(d) {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                Tok::Word(q[i..end].to_string())
            }
            _ => return Err(syntax(&q[i..])),
        };
        out.push(tok);
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

fn is_keyword(w: &str) -> bool {
    matches!(w, "AND" | "OR" | "NOT")
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn error_here(&self) -> String {
        match self.peek() {
            None => "fts5: syntax error near \"\"".to_string(),
            Some(t) => syntax(&match t {
                Tok::Str(s) => format!("\"{s}\""),
                Tok::Word(w) => w.clone(),
                Tok::Star => "*".into(),
                Tok::Plus => "+".into(),
                Tok::Caret => "^".into(),
                Tok::LParen => "(".into(),
                Tok::RParen => ")".into(),
                Tok::Colon => ":".into(),
                Tok::Comma => ",".into(),
                Tok::LBrace => "{".into(),
                Tok::RBrace => "}".into(),
                Tok::Minus => "-".into(),
            }),
        }
    }

    fn word_is(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }

    /// Whether a phrase group (`cnearset` in FTS5's grammar) starts here: these are
    /// the only things implicitly ANDed (`a b`, not `a (b)`).
    fn starts_group(&self) -> bool {
        match self.peek() {
            Some(Tok::Word(w)) => !is_keyword(w),
            Some(Tok::Str(_) | Tok::Caret | Tok::Minus | Tok::LBrace) => true,
            _ => false,
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.word_is("OR") {
            self.pos += 1;
            let right = self.and()?;
            left = Expr::or(left, right);
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.not()?;
        while self.word_is("AND") {
            self.pos += 1;
            let right = self.not()?;
            left = Expr::and(left, right);
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, String> {
        let mut left = self.unit()?;
        while self.word_is("NOT") {
            self.pos += 1;
            let right = self.unit()?;
            left = Expr::not(left, right);
        }
        Ok(left)
    }

    /// `( expr )`, `colset : ( expr )`, or a list of phrase groups (implicit AND,
    /// which binds tighter than NOT, AND and OR).
    fn unit(&mut self) -> Result<Expr, String> {
        if self.eat(&Tok::LParen) {
            return self.parenthesized();
        }
        let mut list = self.group()?;
        while self.starts_group() {
            let next = self.group()?;
            list = Expr::and(list, next);
        }
        Ok(list)
    }

    /// The rest of `( expr )` after the opening parenthesis.
    fn parenthesized(&mut self) -> Result<Expr, String> {
        let e = self.or()?;
        if !self.eat(&Tok::RParen) {
            return Err(self.error_here());
        }
        Ok(e)
    }

    /// `[colset :] nearset`, or `colset : ( expr )` (only as the first group of a
    /// list; FTS5 does not AND it implicitly either).
    fn group(&mut self) -> Result<Expr, String> {
        let negated = self.eat(&Tok::Minus);
        let colset = negated
            || matches!(self.peek(), Some(Tok::LBrace))
            || (matches!(self.peek(), Some(Tok::Word(_))) && self.peek_at(1) == Some(&Tok::Colon));
        if colset {
            let names = self.column_names()?;
            for n in &names {
                if !n.eq_ignore_ascii_case("prompt") {
                    return Err(format!("no such column: {n}"));
                }
            }
            if !self.eat(&Tok::Colon) {
                return Err(self.error_here());
            }
            let inner = if self.eat(&Tok::LParen) {
                self.parenthesized()?
            } else {
                self.nearset()?
            };
            return Ok(if negated { Expr::Nothing } else { inner });
        }
        self.nearset()
    }

    fn column_names(&mut self) -> Result<Vec<String>, String> {
        if self.eat(&Tok::LBrace) {
            let mut names = Vec::new();
            while let Some(Tok::Word(w)) = self.peek().cloned() {
                self.pos += 1;
                names.push(w);
            }
            if names.is_empty() || !self.eat(&Tok::RBrace) {
                return Err(self.error_here());
            }
            return Ok(names);
        }
        match self.peek().cloned() {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                Ok(vec![w])
            }
            _ => Err(self.error_here()),
        }
    }

    /// A phrase, `^phrase`, or `NEAR(phrase... [, N])`.
    fn nearset(&mut self) -> Result<Expr, String> {
        if self.word_is("NEAR") && self.peek_at(1) == Some(&Tok::LParen) {
            self.pos += 2;
            let mut phrases = Vec::new();
            while !matches!(self.peek(), Some(Tok::RParen | Tok::Comma) | None) {
                phrases.push(self.phrase()?);
            }
            if self.eat(&Tok::Comma) {
                match self.peek() {
                    Some(Tok::Word(n)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                        self.pos += 1;
                    }
                    _ => return Err(self.error_here()),
                }
            }
            if phrases.is_empty() || !self.eat(&Tok::RParen) {
                return Err(self.error_here());
            }
            phrases.retain(|p| !p.terms.is_empty());
            return Ok(if phrases.is_empty() {
                Expr::Empty
            } else {
                Expr::Near(phrases)
            });
        }
        let p = self.phrase()?;
        Ok(if p.terms.is_empty() {
            Expr::Empty
        } else {
            Expr::Phrase(p)
        })
    }

    /// `[^] item [*] (+ item [*])*`, an item being a string or a bareword.
    fn phrase(&mut self) -> Result<Phrase, String> {
        let initial = self.eat(&Tok::Caret);
        let mut terms: Vec<(String, bool)> = Vec::new();
        loop {
            let text = match self.peek().cloned() {
                Some(Tok::Str(s)) => s,
                Some(Tok::Word(w)) if !is_keyword(&w) => w,
                _ => return Err(self.error_here()),
            };
            self.pos += 1;
            let start = terms.len();
            terms.extend(tokenize(&text).into_iter().map(|t| (t, false)));
            if self.eat(&Tok::Star) && terms.len() > start {
                if let Some(last) = terms.last_mut() {
                    last.1 = true;
                }
            }
            if !self.eat(&Tok::Plus) {
                break;
            }
        }
        Ok(Phrase { terms, initial })
    }
}

/// Parse an FTS5 query; the error is worded like SQLite's.
pub fn parse(q: &str) -> Result<Expr, String> {
    let mut p = Parser {
        toks: lex(q)?,
        pos: 0,
    };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return Err(p.error_here());
    }
    Ok(e)
}
