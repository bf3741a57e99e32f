//! A large context's JSON streamed from the file: the head, the compaction's summary, each
//! shown message (its lines read a piece at a time, never all held), the tail.

use super::lines::{Line, Notes};
use super::path::{PathContext, Streamed};
use super::SessionIndex;
use crate::context::{ContextJsonReader, JSON_HEAD};
use crate::entry::Text;
use crate::error::{Result, SessionError};
use std::collections::VecDeque;

/// How many bytes of lines a streamed context reads at a time.
const STREAM_PIECE: u64 = 4 << 20;

/// The positions cut into pieces of about [`STREAM_PIECE`] bytes of lines.
pub(crate) fn batches<'p>(
    index: &'p SessionIndex,
    shown: &'p [usize],
) -> impl Iterator<Item = &'p [usize]> {
    let mut rest = shown;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let n = rest
            .iter()
            .take_while(|&&p| {
                bytes += u64::from(index.lens[p]);
                bytes <= STREAM_PIECE
            })
            .count()
            .max(1);
        let (head, tail) = rest.split_at(n);
        rest = tail;
        Some(head)
    })
}

/// A context's JSON read a chunk at a time, however it was opened.
pub enum ContextReader<'a> {
    /// Built in memory.
    Built(Box<ContextJsonReader<'a>>),
    /// Read from the file as it goes.
    Streamed(Box<StreamedReader<'a>>),
}

impl ContextReader<'_> {
    /// The whole JSON's length in bytes, read or not.
    /// A streamed context measures it by reading its lines once more (see
    /// [`PathContext::measure`]).
    pub fn total_bytes(&self) -> Result<usize> {
        match self {
            ContextReader::Built(r) => Ok(r.total_bytes()),
            ContextReader::Streamed(r) => Ok(r.pc.measure()?.0),
        }
    }

    /// How many messages the context has (a streamed context: as [`Self::total_bytes`]).
    pub fn messages(&self) -> Result<usize> {
        match self {
            ContextReader::Built(r) => Ok(r.context().messages.len()),
            ContextReader::Streamed(r) => Ok(r.pc.measure()?.1),
        }
    }

    /// Append at most `max` more bytes of the JSON to `out`; 0 at the end. A streamed
    /// context whose file changed since it was opened (a rewrite: appends change nothing
    /// it reads) fails instead of handing out other bytes.
    pub fn read_into(&mut self, out: &mut Vec<u8>, max: usize) -> Result<usize> {
        match self {
            ContextReader::Built(r) => Ok(r.read_into(out, max)),
            ContextReader::Streamed(r) => r.read_into(out, max),
        }
    }
}

impl std::io::Read for ContextReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            ContextReader::Built(r) => r.read(buf),
            ContextReader::Streamed(r) => {
                let mut out = Vec::with_capacity(buf.len());
                let n = r
                    .read_into(&mut out, buf.len())
                    .map_err(std::io::Error::other)?;
                buf[..n].copy_from_slice(&out);
                Ok(n)
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Head,
    Summary,
    Messages,
    Tail,
    Done,
}

/// The JSON of a streamed context: the head, the summary, each shown message (read a
/// piece of lines at a time), the tail.
pub struct StreamedReader<'a> {
    pc: &'a PathContext,
    st: &'a Streamed,
    tail: String,
    stage: Stage,
    /// What is ready to hand out (a message copied from its line stays where it was
    /// read until it is handed out), and how much of the first piece was.
    pending: VecDeque<Piece>,
    at: usize,
    /// The next shown position to read.
    next: usize,
    first: bool,
    failed: Option<SessionError>,
}

/// Bytes of the JSON ready to hand out, after a comma if `comma`.
struct Piece {
    comma: bool,
    body: Body,
}

enum Body {
    Owned(Vec<u8>),
    /// A message as it is in the lines read.
    Shared(Text),
}

impl Piece {
    fn body(&self) -> &[u8] {
        match &self.body {
            Body::Owned(b) => b,
            Body::Shared(t) => t.as_str().as_bytes(),
        }
    }

    fn len(&self) -> usize {
        usize::from(self.comma) + self.body().len()
    }

    /// Append its bytes `from..to` (the comma first) to `out`.
    fn copy(&self, from: usize, to: usize, out: &mut Vec<u8>) {
        let c = usize::from(self.comma);
        if from < c && to > from {
            out.push(b',');
        }
        out.extend_from_slice(&self.body()[from.max(c) - c..to.max(c) - c]);
    }
}

impl<'a> StreamedReader<'a> {
    pub(super) fn new(pc: &'a PathContext, st: &'a Streamed) -> StreamedReader<'a> {
        StreamedReader {
            tail: pc.state().json_tail(),
            pc,
            st,
            stage: Stage::Head,
            pending: VecDeque::new(),
            at: 0,
            next: 0,
            first: true,
            failed: None,
        }
    }

    fn read_into(&mut self, out: &mut Vec<u8>, max: usize) -> Result<usize> {
        let mut done = 0;
        while done < max {
            if self.pending.is_empty() {
                self.at = 0;
                self.refill()?;
                if self.pending.is_empty() {
                    break;
                }
            }
            let Some(piece) = self.pending.front() else {
                break;
            };
            let len = piece.len();
            let take = (len - self.at).min(max - done);
            piece.copy(self.at, self.at + take, out);
            self.at += take;
            done += take;
            if self.at == len {
                self.pending.pop_front();
                self.at = 0;
            }
        }
        Ok(done)
    }

    fn push(&mut self, body: Body) {
        self.pending.push_back(Piece { comma: false, body });
    }

    fn push_message(&mut self, body: Body) {
        let comma = !self.first;
        self.first = false;
        self.pending.push_back(Piece { comma, body });
    }

    /// The next bytes: the head, the summary, a piece of messages, the tail.
    fn refill(&mut self) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        loop {
            match self.stage {
                Stage::Head => {
                    self.push(Body::Owned(JSON_HEAD.as_bytes().to_vec()));
                    self.stage = Stage::Summary;
                    return Ok(());
                }
                Stage::Summary => {
                    self.stage = Stage::Messages;
                    if let Some(s) = &self.st.summary {
                        self.push_message(Body::Owned(s.clone().into_bytes()));
                        return Ok(());
                    }
                }
                Stage::Messages => {
                    let Some(batch) = batches(&self.pc.index, &self.st.shown[self.next..]).next()
                    else {
                        self.stage = Stage::Tail;
                        continue;
                    };
                    self.next += batch.len();
                    let read = self.pc.lines().read_lines(batch, Notes::Copy);
                    let Ok(Some(read)) = read else {
                        let why = match read {
                            Err(e) => SessionError::Storage(e),
                            Ok(_) => self.pc.changed(),
                        };
                        self.failed = Some(why.clone());
                        return Err(why);
                    };
                    let pc = self.pc;
                    for (_, line) in read {
                        match line {
                            Line::Message(text) => self.push_message(Body::Shared(text)),
                            line => {
                                if let Some(m) = pc.line_message(&line) {
                                    self.push_message(Body::Owned(m.into_owned().into_bytes()));
                                }
                            }
                        }
                    }
                    if !self.pending.is_empty() {
                        return Ok(());
                    }
                }
                Stage::Tail => {
                    self.push(Body::Owned(self.tail.as_bytes().to_vec()));
                    self.stage = Stage::Done;
                    return Ok(());
                }
                Stage::Done => return Ok(()),
            }
        }
    }
}
