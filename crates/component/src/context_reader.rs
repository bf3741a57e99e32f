//! The exported `context-reader` resource: a session file's context JSON handed out in
//! chunks. It owns the opened file (read through its index when it has one) and the
//! reader of its context (which borrows it), so the JSON is produced as the host reads
//! it: a large context is read from the file a piece at a time, never held whole.

use std::cell::RefCell;

use xcsh_session::{ContextReader, OpenedContext};

use crate::exports::xcsh::session::session_api::GuestContextReader;

self_cell::self_cell!(
    /// An opened session file and the reader of its context.
    struct OpenedContextReader {
        owner: OpenedContext,
        #[covariant]
        dependent: ContextReader,
    }
);

pub struct ContextReaderResource(RefCell<OpenedContextReader>);

impl ContextReaderResource {
    /// The context of the file opened for it.
    pub fn new(opened: OpenedContext) -> Self {
        ContextReaderResource(RefCell::new(OpenedContextReader::new(opened, |o| {
            o.json_reader()
        })))
    }
}

impl GuestContextReader for ContextReaderResource {
    /// A file rewritten since it was opened (a line no longer where it was) traps with
    /// the reason: the interface has no error here, and handing out other bytes, or
    /// fewer, would pass for a whole context.
    fn read(&self, max_bytes: u64) -> Vec<u8> {
        let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let mut out = Vec::new();
        let read = self
            .0
            .borrow_mut()
            .with_dependent_mut(|_, reader| reader.read_into(&mut out, max));
        if let Err(e) = read {
            panic!("{e}");
        }
        out
    }

    /// A streamed context is measured by reading its lines once more; a file rewritten
    /// since it was opened traps, as `read` does.
    fn byte_length(&self) -> u64 {
        match self.0.borrow().borrow_dependent().total_bytes() {
            Ok(n) => n as u64,
            Err(e) => panic!("{e}"),
        }
    }
}
