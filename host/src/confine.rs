//! Path confinement: every path the component passes must resolve inside one of the
//! allowed root directories.
//!
//! The storage calls resolve no path here: each root is a directory handle
//! ([`Roots::handle`], cap-std's `Dir`), a guest path written under a root is placed
//! beneath it as written ([`Roots::under`]) and cap-std resolves the rest, following a
//! symlink only while it stays beneath the root (one `openat2(RESOLVE_BENEATH)` where the
//! kernel has it), so a directory or file swapped for a symlink that leads out makes the
//! call fail. A file with more than one hard link is neither read nor written
//! (`PathPolicy::single_link`): its other name may be outside the roots, where no path
//! check can see it.
//!
//! The check below ([`Roots::check`]) is for the rest: paths that reach a root through a
//! symlink, absolute symlinks (cap-std follows none, even back inside), the readable
//! files outside the roots, and the paths SQLite opens by name (the history databases).
//! There a guest path is accepted when it is absolute, has no `..` component, and, after
//! its longest existing ancestor is canonicalized (resolving symlinks), lies inside a
//! root. The non-existent rest is appended verbatim; if its first component exists as a
//! dangling or looping symlink the path is refused, since creating it would follow the
//! link wherever it points. A storage call then goes beneath the root the resolved path
//! lies in, by that path, which has no symlink left to follow.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};
use xcsh_session::fs::{open_dir, Dir};

/// Why a path was refused.
#[derive(Debug)]
pub enum Denied {
    /// Not absolute, or contains `..`.
    Malformed(&'static str),
    /// Resolves outside every root.
    Outside(PathBuf),
    /// A dangling or looping symlink where a new file or directory would be created.
    DanglingSymlink(PathBuf),
    /// The filesystem refused to resolve the path (e.g. permission denied).
    Io(io::Error),
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denied::Malformed(why) => write!(f, "{why}"),
            Denied::Outside(p) => {
                write!(f, "resolves to {} outside the allowed roots", p.display())
            }
            Denied::DanglingSymlink(p) => write!(f, "{} is a dangling symlink", p.display()),
            Denied::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Resolve `path` (absolute, no `..`): canonicalize its longest existing ancestor and
/// append the rest. Refuses a dangling symlink as the first missing component.
pub fn resolve(path: &Path) -> Result<PathBuf, Denied> {
    if !path.is_absolute() {
        return Err(Denied::Malformed("path is not absolute"));
    }
    for c in path.components() {
        match c {
            Component::ParentDir => return Err(Denied::Malformed("path contains '..'")),
            Component::Prefix(_) => return Err(Denied::Malformed("path has a prefix")),
            Component::RootDir | Component::CurDir | Component::Normal(_) => {}
        }
    }
    // Walk up until an ancestor canonicalizes; collect the missing tail (reversed).
    let mut tail: Vec<OsString> = Vec::new();
    let mut current = path.to_path_buf();
    // Times a component that appeared between `canonicalize` and `symlink_metadata` (made
    // by another process just then) is looked at again.
    let mut raced = 0;
    let mut base = loop {
        match fs::canonicalize(&current) {
            Ok(canon) => break canon,
            Err(e) if is_missing(&e) => {
                let name = match current.file_name() {
                    Some(n) => n.to_os_string(),
                    None => return Err(Denied::Io(e)), // the root itself is missing
                };
                // Something exists here (a symlink whose target is missing, or a loop):
                // creating through it would escape the check.
                match fs::symlink_metadata(&current) {
                    Ok(meta) if !meta.file_type().is_symlink() && raced < 3 => {
                        // Not a symlink: it was created after `canonicalize` looked.
                        raced += 1;
                        continue;
                    }
                    Ok(_) => return Err(Denied::DanglingSymlink(current)),
                    Err(_) => {}
                }
                tail.push(name);
                if !current.pop() {
                    return Err(Denied::Io(e));
                }
            }
            Err(e) => return Err(Denied::Io(e)),
        }
    };
    for name in tail.into_iter().rev() {
        base.push(name);
    }
    Ok(base)
}

/// Errors that mean "this path does not exist (yet)": walk further up.
fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// A guest path as written, checked for form only: absolute, no `..`, no NUL; `.` and
/// empty components dropped. Nothing is resolved.
pub fn plain(guest: &str) -> Result<PathBuf, Denied> {
    if guest.contains('\0') {
        return Err(Denied::Malformed("path contains NUL"));
    }
    let path = Path::new(guest);
    if !path.is_absolute() {
        return Err(Denied::Malformed("path is not absolute"));
    }
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => return Err(Denied::Malformed("path contains '..'")),
            Component::Prefix(_) => return Err(Denied::Malformed("path has a prefix")),
            Component::CurDir => {}
            Component::RootDir | Component::Normal(_) => out.push(c),
        }
    }
    Ok(out)
}

/// The allowed roots, each resolved once and opened as a directory handle when first
/// used, and single files outside them that may be read but never written (the sessions
/// garbage collection must read).
#[derive(Debug, Clone)]
pub struct Roots {
    roots: Vec<PathBuf>,
    handles: Vec<OnceLock<Arc<Dir>>>,
    readable_files: HashSet<PathBuf>,
}

impl Roots {
    /// Resolve each root like a guest path (they need not exist yet).
    pub fn new<P: AsRef<Path>>(dirs: &[P]) -> Result<Roots, Denied> {
        let roots = dirs
            .iter()
            .map(|d| resolve(d.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Roots {
            handles: roots.iter().map(|_| OnceLock::new()).collect(),
            roots,
            readable_files: HashSet::new(),
        })
    }

    /// The innermost root `path` ([`plain`]) lies under as written, and the rest of it.
    pub fn under<'p>(&self, path: &'p Path) -> Option<(usize, &'p Path)> {
        self.roots
            .iter()
            .enumerate()
            .filter_map(|(i, r)| path.strip_prefix(r).ok().map(|rel| (i, rel)))
            .min_by_key(|(_, rel)| rel.components().count())
    }

    /// The handle of root `i`, opened on first use. A root that does not exist yet is
    /// created first when `create` is set (a write into it), else it is not found.
    pub fn handle(&self, i: usize, create: bool) -> io::Result<Arc<Dir>> {
        if let Some(dir) = self.handles[i].get() {
            return Ok(dir.clone());
        }
        let root = &self.roots[i];
        let dir = match open_dir(root) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(root)?;
                open_dir(root)?
            }
            other => other?,
        };
        Ok(self.handles[i].get_or_init(|| Arc::new(dir)).clone())
    }

    /// Whether `path` (resolved) is one of the files that may be read outside the roots.
    pub fn is_readable_file(&self, path: &Path) -> bool {
        self.readable_files.contains(path)
    }

    /// Let these files be read (never written, never listed), wherever they are: each is
    /// resolved now like a guest path, and a read must resolve to exactly one of them. A
    /// file that does not exist reads as not found; one that cannot be resolved is left
    /// out (its reads are refused).
    pub fn with_readable_files<P: AsRef<Path>>(mut self, files: &[P]) -> Roots {
        self.readable_files = files
            .iter()
            .filter_map(|f| resolve(f.as_ref()).ok())
            .collect();
        self
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The resolved host path of a guest path to read: inside a root, or one of the
    /// readable files.
    pub fn check_read(&self, guest: &str) -> Result<PathBuf, Denied> {
        match self.check(guest) {
            Err(Denied::Outside(resolved)) if self.readable_files.contains(&resolved) => {
                Ok(resolved)
            }
            other => other,
        }
    }

    /// The resolved host path of a guest path, or why it is refused.
    pub fn check(&self, guest: &str) -> Result<PathBuf, Denied> {
        if guest.contains('\0') {
            return Err(Denied::Malformed("path contains NUL"));
        }
        let resolved = resolve(Path::new(guest))?;
        if self.roots.iter().any(|r| resolved.starts_with(r)) {
            Ok(resolved)
        } else {
            Err(Denied::Outside(resolved))
        }
    }
}

/// Make a command-line path absolute without resolving its last component: the parent is
/// resolved (symlinks included) and the file name kept, so a session file that is itself
/// a symlink is still checked by the confinement on every access.
pub fn absolute_file(path: &Path) -> io::Result<PathBuf> {
    let abs = std::path::absolute(path)?;
    let name = match abs.components().next_back() {
        Some(Component::Normal(n)) => n.to_os_string(),
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} does not name a file", path.display()),
            ))
        }
    };
    let parent = abs.parent().unwrap_or(Path::new("/"));
    let parent = resolve_dotdot(parent);
    let dir = resolve(&parent).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: {e}", path.display()),
        )
    })?;
    Ok(dir.join(name))
}

/// Resolve `..` in a command-line directory the way a shell user means it: through the
/// filesystem when the prefix exists (canonicalize), lexically otherwise.
fn resolve_dotdot(dir: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in dir.components() {
        match c {
            Component::ParentDir => {
                out = fs::canonicalize(&out).unwrap_or(out);
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A project directory given on the command line (`--cwd`, `--to-cwd`): made absolute
/// against the current directory, `.` dropped, `..` resolved like [`absolute_dir`] does.
/// Unlike a root it is not canonicalized: a project is named after its path as written
/// (the directory need not exist, e.g. a project that was moved away).
pub fn absolute_cwd(path: &Path) -> io::Result<PathBuf> {
    let abs = std::path::absolute(path)?;
    Ok(resolve_dotdot(&abs))
}

/// A directory given on the command line, made absolute and free of `..`.
pub fn absolute_dir(path: &Path) -> io::Result<PathBuf> {
    let abs = std::path::absolute(path)?;
    let clean = resolve_dotdot(&abs);
    resolve(&clean).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: {e}", path.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = fs::canonicalize(tmp.path()).expect("canonical tempdir");
        let root = base.join("root");
        let outside = base.join("outside");
        fs::create_dir_all(root.join("sub")).expect("mkdir");
        fs::create_dir_all(&outside).expect("mkdir");
        fs::write(outside.join("secret"), "x").expect("write");
        fs::write(root.join("sub/a.jsonl"), "{}").expect("write");
        (tmp, root, outside)
    }

    fn s(p: &Path) -> String {
        p.to_str().expect("utf-8 path").to_string()
    }

    #[test]
    fn accepts_existing_and_missing_paths_under_a_root() {
        let (_t, root, _) = setup();
        let roots = Roots::new(&[&root]).expect("roots");
        assert_eq!(
            roots.check(&s(&root.join("sub/a.jsonl"))).expect("ok"),
            root.join("sub/a.jsonl")
        );
        assert_eq!(roots.check(&s(&root)).expect("root itself"), root);
        let missing = root.join("new/dir/file.jsonl");
        assert_eq!(roots.check(&s(&missing)).expect("missing ok"), missing);
        assert_eq!(
            roots
                .check(&format!("{}/./sub//a.jsonl", s(&root)))
                .expect("dots"),
            root.join("sub/a.jsonl")
        );
    }

    #[test]
    fn rejects_relative_and_dotdot() {
        let (_t, root, _) = setup();
        let roots = Roots::new(&[&root]).expect("roots");
        assert!(matches!(
            roots.check("sub/a.jsonl"),
            Err(Denied::Malformed(_))
        ));
        assert!(matches!(roots.check(""), Err(Denied::Malformed(_))));
        assert!(matches!(
            roots.check(&format!("{}/sub/../sub/a.jsonl", s(&root))),
            Err(Denied::Malformed(_))
        ));
        assert!(matches!(
            roots.check(&format!("{}/../outside/secret", s(&root))),
            Err(Denied::Malformed(_))
        ));
        assert!(matches!(
            roots.check(&format!("{}/a\0b", s(&root))),
            Err(Denied::Malformed(_))
        ));
    }

    #[test]
    fn rejects_paths_outside_every_root() {
        let (_t, root, outside) = setup();
        let roots = Roots::new(&[&root]).expect("roots");
        assert!(matches!(
            roots.check(&s(&outside.join("secret"))),
            Err(Denied::Outside(_))
        ));
        assert!(matches!(
            roots.check("/etc/passwd"),
            Err(Denied::Outside(_))
        ));
        // A sibling whose name starts like the root is not inside it.
        let sibling = root.with_file_name("root2");
        assert!(matches!(
            roots.check(&s(&sibling.join("x"))),
            Err(Denied::Outside(_))
        ));
    }

    #[test]
    fn rejects_symlink_escapes() {
        let (_t, root, outside) = setup();
        symlink(&outside, root.join("out-dir")).expect("symlink");
        symlink(outside.join("secret"), root.join("out-file")).expect("symlink");
        symlink("/etc", root.join("etc")).expect("symlink");
        symlink(outside.join("not-yet"), root.join("dangling")).expect("symlink");
        symlink(root.join("loop"), root.join("loop")).expect("symlink");
        let roots = Roots::new(&[&root]).expect("roots");
        assert!(matches!(
            roots.check(&s(&root.join("out-dir/secret"))),
            Err(Denied::Outside(_))
        ));
        assert!(matches!(
            roots.check(&s(&root.join("out-dir/new-file"))),
            Err(Denied::Outside(_))
        ));
        assert!(matches!(
            roots.check(&s(&root.join("out-file"))),
            Err(Denied::Outside(_))
        ));
        assert!(matches!(
            roots.check(&s(&root.join("etc/passwd"))),
            Err(Denied::Outside(_))
        ));
        assert!(matches!(
            roots.check(&s(&root.join("dangling"))),
            Err(Denied::DanglingSymlink(_))
        ));
        assert!(roots.check(&s(&root.join("loop"))).is_err());
        assert!(roots.check(&s(&root.join("loop/x"))).is_err());
    }

    #[test]
    fn symlinks_that_stay_inside_are_fine() {
        let (_t, root, _) = setup();
        symlink(root.join("sub"), root.join("alias")).expect("symlink");
        let roots = Roots::new(&[&root]).expect("roots");
        assert_eq!(
            roots.check(&s(&root.join("alias/a.jsonl"))).expect("ok"),
            root.join("sub/a.jsonl")
        );
    }

    #[test]
    fn a_root_reached_through_a_symlink_is_resolved() {
        let (_t, root, outside) = setup();
        let link = outside.join("to-root");
        symlink(&root, &link).expect("symlink");
        let roots = Roots::new(&[&link]).expect("roots");
        assert_eq!(roots.dirs(), std::slice::from_ref(&root));
        assert!(roots.check(&s(&link.join("sub/a.jsonl"))).is_ok());
        assert!(roots.check(&s(&outside.join("secret"))).is_err());
    }

    #[test]
    fn several_roots_and_a_missing_root() {
        let (_t, root, outside) = setup();
        let agent = root.with_file_name("agent-not-created");
        let roots = Roots::new(&[&root, &agent]).expect("roots");
        assert!(roots.check(&s(&agent.join("blobs/abc"))).is_ok());
        assert!(roots.check(&s(&outside.join("secret"))).is_err());
    }

    #[test]
    fn file_arguments_keep_their_last_component() {
        let (_t, root, outside) = setup();
        symlink(outside.join("secret"), root.join("s.jsonl")).expect("symlink");
        let abs = absolute_file(&root.join("sub/../s.jsonl")).expect("absolute");
        assert_eq!(abs, root.join("s.jsonl"));
        assert!(absolute_file(Path::new("/")).is_err());
    }

    #[test]
    fn project_directories_keep_their_symlinks_but_lose_dots() {
        let (_t, root, outside) = setup();
        symlink(&outside, root.join("link")).expect("symlink");
        assert_eq!(
            absolute_cwd(&root.join("link/./x/")).expect("abs"),
            root.join("link/x")
        );
        // `..` goes through the filesystem, as for every other argument.
        assert_eq!(
            absolute_cwd(&root.join("link/../y")).expect("abs"),
            outside.with_file_name("y")
        );
        assert_eq!(
            absolute_cwd(Path::new("/no/such/../dir")).expect("abs"),
            Path::new("/no/dir")
        );
        let rel = absolute_cwd(Path::new("some/dir")).expect("abs");
        assert!(rel.is_absolute() && rel.ends_with("some/dir"), "{rel:?}");
    }
}
