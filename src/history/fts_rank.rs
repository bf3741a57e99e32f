//! Evaluating a parsed FTS5 query on a tokenized prompt for the in-memory store: whether
//! it matches, and its Okapi BM25 score (like FTS5's `bm25()`).

use super::fts_query::{Expr, Phrase};

/// How often `phrase` occurs in `doc` (a token list).
pub fn phrase_count(phrase: &Phrase, doc: &[String]) -> usize {
    let n = phrase.terms.len();
    if n == 0 || n > doc.len() {
        return 0;
    }
    let starts = if phrase.initial {
        0..1
    } else {
        0..doc.len() - n + 1
    };
    starts
        .filter(|&i| {
            phrase.terms.iter().enumerate().all(|(j, (t, prefix))| {
                let tok = &doc[i + j];
                if *prefix {
                    tok.starts_with(t.as_str())
                } else {
                    tok == t
                }
            })
        })
        .count()
}

pub fn matches(e: &Expr, doc: &[String]) -> bool {
    match e {
        Expr::Phrase(p) => phrase_count(p, doc) > 0,
        Expr::And(a, b) => matches(a, doc) && matches(b, doc),
        Expr::Or(a, b) => matches(a, doc) || matches(b, doc),
        Expr::Not(a, b) => matches(a, doc) && !matches(b, doc),
        Expr::Near(ps) => ps.iter().all(|p| phrase_count(p, doc) > 0),
        Expr::Nothing | Expr::Empty => false,
    }
}

/// The phrases that contribute to the rank (not those after NOT).
pub fn scored_phrases<'a>(e: &'a Expr, out: &mut Vec<&'a Phrase>) {
    match e {
        Expr::Phrase(p) => out.push(p),
        Expr::And(a, b) | Expr::Or(a, b) => {
            scored_phrases(a, out);
            scored_phrases(b, out);
        }
        Expr::Not(a, _) => scored_phrases(a, out),
        Expr::Near(ps) => out.extend(ps.iter()),
        Expr::Nothing | Expr::Empty => {}
    }
}

/// Okapi BM25 (k1 = 1.2, b = 0.75) of the scored phrases of a query, with the statistics
/// taken over the whole table, as FTS5 keeps them.
pub struct Bm25<'a> {
    phrases: Vec<&'a Phrase>,
    idf: Vec<f64>,
    avg_len: f64,
}

impl<'a> Bm25<'a> {
    /// The statistics of `expr` over `docs`, every row of the table (tokenized).
    pub fn new(expr: &'a Expr, docs: &[Vec<String>]) -> Self {
        let n = docs.len() as f64;
        let avg_len = (docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0)).max(1.0);
        let mut phrases = Vec::new();
        scored_phrases(expr, &mut phrases);
        let idf: Vec<f64> = phrases
            .iter()
            .map(|p| {
                let with = docs.iter().filter(|d| phrase_count(p, d) > 0).count() as f64;
                let v = ((n - with + 0.5) / (with + 0.5)).ln();
                if v <= 0.0 {
                    1e-6
                } else {
                    v
                }
            })
            .collect();
        Bm25 {
            phrases,
            idf,
            avg_len,
        }
    }

    /// The score of one (matching) row; higher is better.
    pub fn score(&self, doc: &[String]) -> f64 {
        let (k1, b) = (1.2, 0.75);
        let len = doc.len() as f64;
        self.phrases
            .iter()
            .zip(&self.idf)
            .map(|(p, idf)| {
                let tf = phrase_count(p, doc) as f64;
                idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / self.avg_len))
            })
            .sum::<f64>()
    }
}
