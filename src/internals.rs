//! Not part of the API (hidden from the docs, no stability promise): the hand-written
//! passes kept for speed, with their library alternatives, for the fuzz targets that
//! check they agree and the benchmark row (`bench_native parsers`) that keeps each
//! choice justified by a number; and the few helpers the examples' data generators use.

pub use crate::blob::{encode_base64, rehydrate, sha256_hex};
pub use crate::entry::fields::{scan_entry_fields, serde_entry_fields, EntryFields};
pub use crate::entry::{compose_line, pick, Text};
pub use crate::index::path::{lines_parsed, set_stream_above};
pub use crate::json::{object_fields, quote};
pub use crate::jsonl::parse_lenient;
pub use crate::persist::{prepare_for_persistence, Transforms};
/// The picker's ranking over sessions listed with their text: the reference the
/// streamed [`crate::SessionSearch`] is tested against.
pub use crate::picker::search as rank_listed;
pub use crate::scan::{is_valid_json, scan_object, ObjectScan};
pub use crate::time::iso_from_ms;
pub use crate::urls::parse as parse_url;
