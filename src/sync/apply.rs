//! A merge plan carried out on the local file: a file made for a session first written
//! elsewhere, lines appended, or the file rewritten atomically.

use super::blobs;
use super::lines::Line;
use super::merge::{From, Write};
use super::run::SyncError;
use super::session::{Job, LocalFile, SessionSync};
use crate::blob::BlobStore;
use crate::entry::Header;
use crate::paths::{session_file_name, sessions_root};
use crate::storage::{join, StorageExt};

/// The file after the merge, and its size.
pub(crate) struct Applied {
    pub file: Option<String>,
    pub size: u64,
}

fn lines_of<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut data = vec![];
    for l in lines {
        data.extend_from_slice(l);
        data.push(b'\n');
    }
    data
}

/// Carries out `write` for the job's session (the merge's blobs fetched first, so a line
/// in the file never refers to a blob a sync could have brought).
pub(crate) fn apply(
    job: &Job,
    write: &Write,
    local: &LocalFile,
    incoming: &[&Line],
    header: Option<&[u8]>,
    blob_store: &BlobStore,
    out: &mut SessionSync,
) -> Result<Applied, SyncError> {
    let storage = job.storage;
    let file = out.file.clone();
    let remote_order: Vec<usize> = match write {
        Write::Nothing => {
            return Ok(Applied {
                file,
                size: local.complete as u64,
            })
        }
        Write::Append(o) => o.clone(),
        Write::Rewrite(o) => o
            .iter()
            .filter_map(|f| {
                if let From::Remote(i) = f {
                    Some(*i)
                } else {
                    None
                }
            })
            .collect(),
    };
    out.pulled_entries = remote_order.len();
    if !job.dry_run {
        blobs::fetch(
            job.remote,
            blob_store,
            remote_order.iter().map(|&i| incoming[i]),
        )?;
    }
    let Some(f) = file else {
        // A session first written elsewhere: made here from its header, in the folder of
        // its project, under the agent's name for it.
        let Some(h) = header else {
            out.held = incoming.len();
            out.pulled_entries = 0;
            return Ok(Applied {
                file: None,
                size: 0,
            });
        };
        let Some(parsed) = std::str::from_utf8(h).ok().and_then(Header::from_json) else {
            out.refused
                .push(format!("{}: its header cannot be read", job.session));
            out.pulled_entries = 0;
            return Ok(Applied {
                file: None,
                size: 0,
            });
        };
        let dir = join(&sessions_root(job.agent_dir), job.project);
        let path = join(
            &dir,
            &session_file_name(
                parsed.timestamp().unwrap_or("1970-01-01T00:00:00.000Z"),
                job.session,
            ),
        );
        let data = lines_of(
            std::iter::once(h).chain(remote_order.iter().map(|&i| incoming[i].bytes.as_slice())),
        );
        out.created = true;
        if !job.dry_run {
            storage.mkdir_all(&dir)?;
            storage.create_new(&path, &data)?;
            storage.fsync(&path)?;
        }
        return Ok(Applied {
            file: Some(path),
            size: data.len() as u64,
        });
    };
    match write {
        Write::Append(order) => {
            let data = lines_of(order.iter().map(|&i| incoming[i].bytes.as_slice()));
            // A last line still being written would be glued to the first new one: the
            // new lines wait for the next sync (only a writer that died leaves one).
            if !local.unfinished().is_empty() {
                out.pulled_entries = 0;
                out.in_use = true;
                return Ok(Applied {
                    file: Some(f),
                    size: local.complete as u64,
                });
            }
            if !job.dry_run {
                storage.append(&f, &data)?;
                storage.fsync(&f)?;
            }
            Ok(Applied {
                file: Some(f),
                size: (local.complete + data.len()) as u64,
            })
        }
        Write::Rewrite(order) => {
            let mut data = lines_of(local.header.iter().map(Vec::as_slice).chain(
                order.iter().map(|x| match *x {
                    From::Local(i) => local.lines[i].bytes.as_slice(),
                    From::Remote(i) => incoming[i].bytes.as_slice(),
                }),
            ));
            let covered = data.len() as u64;
            // What a writer had not finished stays after everything (not covered).
            data.extend_from_slice(local.unfinished());
            out.rewritten = true;
            if !job.dry_run {
                storage.atomic_write(&f, &data)?;
            }
            Ok(Applied {
                file: Some(f),
                size: covered,
            })
        }
        Write::Nothing => unreachable!("returned above"),
    }
}
