//! The exported `session-search` resource: the picker's search over a store, a step at
//! a time (see [`xcsh_session::SessionSearch`]), so the host shows progress and stops
//! when it wants.

use std::cell::RefCell;

use xcsh_session::{api, SearchProgress as Progress, SessionSearch};

use crate::exports::xcsh::session::session_json::{GuestSessionSearch, SearchProgress};

pub struct SessionSearchResource(RefCell<SessionSearch>);

impl SessionSearchResource {
    pub fn new(search: SessionSearch) -> Self {
        SessionSearchResource(RefCell::new(search))
    }
}

fn progress(p: Progress) -> SearchProgress {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    SearchProgress {
        files_done: count(p.files_done),
        files: count(p.files),
        bytes_done: p.bytes_done,
        bytes: p.bytes,
        hits: count(p.hits),
    }
}

impl GuestSessionSearch for SessionSearchResource {
    fn step(&self, budget: u64) -> SearchProgress {
        let mut search = self.0.borrow_mut();
        search.step(budget);
        progress(search.progress())
    }

    fn done(&self) -> bool {
        self.0.borrow().is_done()
    }

    fn hits(&self) -> String {
        api::search_hits_json(&self.0.borrow())
    }
}
