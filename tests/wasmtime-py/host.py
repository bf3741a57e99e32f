"""A host of the component that is not the project's: wasmtime-py (PyPI `wasmtime`).

It supplies the component's two own imports over Python's `os` and files, in the
dynamic component API of wasmtime-py, and takes the standard WASI clock and random from
wasmtime's own WASI (`Linker.add_wasip2`). `SessionApi` calls the exports by name.
Paths are used as they are: the sandbox, if any, is this host's business.
"""
import errno
import os
import socket

from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import (
    Component, Linker, Record, ResourceHost, ResourceType, ResultType, Variant,
)

READER = 1  # the host id of the `reader` resource type
_readers = {}  # rep -> open file


def _err(e):
    """An OSError as the WIT `storage-error` variant."""
    tag = {errno.ENOENT: "not-found", errno.EEXIST: "already-exists",
           errno.EACCES: "permission-denied", errno.EPERM: "permission-denied"}.get(e.errno, "other")
    return Variant(tag, str(e))


def _io(f):
    """Run `f`; an OSError becomes the `err` of the WIT result."""
    def wrapped(_store, *args):
        try:
            return f(*args)
        except OSError as e:
            return _err(e)
    return wrapped


def _read_prefix(path, max_bytes):
    with open(path, "rb") as f:
        return f.read(max_bytes)


def _read_range(path, offset, length):
    """At most `length` bytes at `offset`: a seek and reads from there, never the whole file."""
    out = bytearray()
    with open(path, "rb", buffering=0) as f:
        f.seek(offset)
        while len(out) < length:
            piece = f.read(min(length - len(out), 1 << 20))
            if not piece:
                break
            out += piece
    return bytes(out)


def _write(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


def _fsync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _record(**fields):
    """A WIT record: its fields by their WIT (kebab-case) names."""
    rec = Record()
    for name, value in fields.items():
        setattr(rec, name.replace("_", "-"), value)
    return rec


def field(record, name):
    """A field of a record the component returned, by its Python-style name."""
    return getattr(record, name.replace("_", "-"))


def _stat(path):
    s = os.stat(path)
    return _record(size=s.st_size, mtime_ms=int(s.st_mtime * 1000), is_dir=os.path.isdir(path))


def _list_dir(path):
    out = []
    with os.scandir(path) as it:
        for e in it:
            out.append(_record(name=e.name, is_dir=e.is_dir()))
    return out


def _open_reader(path):
    f = open(path, "rb")
    rep = len(_readers) + 1
    while rep in _readers:
        rep += 1
    _readers[rep] = f
    return ResourceHost.own(rep, READER)


def _reader_read(store, this, max_bytes):
    rep = this.to_host(store).rep if hasattr(this, "to_host") else this.rep
    try:
        return _readers[rep].read(max_bytes)
    except OSError as e:
        return _err(e)


def _reader_drop(_store, rep):
    f = _readers.pop(rep, None)
    if f:
        f.close()


def _alive(_store, pid):
    try:
        os.kill(pid, 0)
        return True
    except PermissionError:
        return True
    except OSError:
        return False


def _no_history(_store, *_args):
    return Variant("other", "this host keeps no prompt history")


# The `storage` functions by their WIT names (besides the `reader` resource's), each
# taking the store first, as `link` defines them.
STORAGE = {
    "read": _io(lambda p: open(p, "rb").read()),
    "open-reader": _io(_open_reader),
    "read-prefix": _io(_read_prefix),
    "read-range": _io(_read_range),
    "write": _io(lambda p, d: _write(p, d)),
    "append": _io(lambda p, d: _write(p, d, "ab")),
    "rename": _io(os.replace),
    "unlink": _io(os.unlink),
    "list-dir": _io(_list_dir),
    "stat": _io(_stat),
    "mkdir-all": _io(lambda p: os.makedirs(p, exist_ok=True)),
    "fsync": _io(_fsync),
    "rmdir": _io(os.rmdir),
    "create-new": _io(lambda p, d: _write(p, d, "xb")),
    "process-identity": lambda _s: (os.getpid(), socket.gethostname()),
    "process-alive": _alive,
}


# The `history` functions by their WIT names: this host keeps no history.
HISTORY = ("add", "search", "recent", "last-prompt")


def link(linker):
    """Define the component's imports in `linker`."""
    linker.add_wasip2()  # wasi:clocks and wasi:random, as wasmtime provides them
    with linker.root() as root:
        with root.add_instance("xcsh:session/storage@0.2.0") as s:
            s.add_resource("reader", ResourceType.host(READER), _reader_drop)
            s.add_func("[method]reader.read", _reader_read)
            for name, func in STORAGE.items():
                s.add_func(name, func)
        with root.add_instance("xcsh:session/history@0.2.0") as h:
            for name in HISTORY:
                h.add_func(name, _no_history)


class ApiError(Exception):
    """The component's `api-error`: `kind` (e.g. `entry-not-found`) and its message."""

    def __init__(self, record):
        super().__init__(f"{record.kind}: {record.message}")
        self.kind = record.kind
        self.message = record.message


def _unwrap(result_type, value):
    """A WIT `result`'s ok value; its `err` (an api-error) raised as ApiError.

    wasmtime-py gives a result as a tagged `Variant` when ok and err are of the same
    Python class (a record and the api-error record), else the bare value."""
    if not isinstance(result_type, ResultType):
        return value
    if isinstance(value, Variant) and value.tag in ("ok", "err"):
        if value.tag == "err":
            raise ApiError(value.payload)
        return value.payload
    if isinstance(value, Record) and hasattr(value, "kind") and hasattr(value, "message"):
        raise ApiError(value)
    return value


class SessionApi:
    """The component's `session-api` exports (typed), called by their WIT names, and
    `session-json`'s (the CLI's JSON text) through `call_json`."""

    IFACE = "xcsh:session/session-api@0.2.0"
    JSON_IFACE = "xcsh:session/session-json@0.2.0"

    def __init__(self, component_path):
        engine = Engine()
        self.store = Store(engine)
        self.store.set_wasi(WasiConfig())
        linker = Linker(engine)
        link(linker)
        self.instance = linker.instantiate(self.store, Component.from_file(engine, component_path))
        self.iface = self.instance.get_export_index(self.store, self.IFACE)
        self.json_iface = self.instance.get_export_index(self.store, self.JSON_IFACE)

    def call(self, name, *args):
        """Call export `name` (e.g. `[static]session.create`): its ok value, or ApiError."""
        return self._call(self.iface, name, args)

    def call_json(self, name, *args):
        """Call `session-json`'s export `name` (e.g. `show`): its JSON text, or ApiError."""
        return self._call(self.json_iface, name, args)

    def _call(self, iface, name, args):
        idx = self.instance.get_export_index(self.store, name, iface)
        func = self.instance.get_func(self.store, idx)
        result = func(self.store, *args)
        func.post_return(self.store)
        return _unwrap(func.type(self.store).result, result)
