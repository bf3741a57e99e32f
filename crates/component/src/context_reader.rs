//! The exported `context-reader` resource: a session file's context JSON handed out in
//! chunks. It owns the session it read and the context built from it (the context
//! borrows the session's entries), so the JSON is produced as the host reads it.

use std::cell::RefCell;

use xcsh_session::{ContextJsonReader, Session};

use crate::exports::xcsh::session::session_api::GuestContextReader;

self_cell::self_cell!(
    /// A session and the reader of one of its contexts.
    struct SessionContextReader {
        owner: Session,
        #[covariant]
        dependent: ContextJsonReader,
    }
);

pub struct ContextReaderResource(RefCell<SessionContextReader>);

impl ContextReaderResource {
    /// The context of `session` at `leaf` (default: its last entry).
    pub fn new(session: Session, leaf: Option<&str>) -> Self {
        ContextReaderResource(RefCell::new(SessionContextReader::new(session, |s| {
            xcsh_session::api::file_context(s, leaf).into_json_reader()
        })))
    }
}

impl GuestContextReader for ContextReaderResource {
    fn read(&self, max_bytes: u64) -> Vec<u8> {
        let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let mut out = Vec::new();
        self.0
            .borrow_mut()
            .with_dependent_mut(|_, reader| reader.read_into(&mut out, max));
        out
    }

    fn byte_length(&self) -> u64 {
        self.0.borrow().borrow_dependent().total_bytes() as u64
    }
}
