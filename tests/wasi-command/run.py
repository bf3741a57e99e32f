"""Run the WASI command under wasmtime-py (PyPI `wasmtime`) as `wasmtime run` would:
wasmtime's own WASI 0.2 (`Linker.add_wasip2`), the arguments, the preopened directories
and nothing else; no storage host code at all. The exit status is the one the command
gives to `wasi:cli/exit` (0 when `wasi:cli/run` returns ok).

    python3 run.py COMPONENT [--dir HOST::GUEST]... [--env NAME=VALUE]... [--] ARGS...
"""
import os
import sys
import tempfile

from wasmtime import Engine, ExitTrap, Store, WasiConfig
from wasmtime.component import Component, Linker

_engine = Engine()
_components = {}


def run(component, args, dirs=(), env=(), stdin=None, inherit_stdin=False):
    """Run the command once: (exit status, stdout bytes, stderr bytes)."""
    if component not in _components:
        _components[component] = Component.from_file(_engine, component)
    wasi = WasiConfig()
    wasi.argv = ["xcsh-session", *args]
    wasi.env = list(env)
    for host, guest in dirs:
        wasi.preopen_dir(host, guest)
    with tempfile.TemporaryDirectory(prefix="xcsh-wasi-run-") as tmp:
        wasi.stdout_file = f"{tmp}/stdout"
        wasi.stderr_file = f"{tmp}/stderr"
        if inherit_stdin:
            wasi.inherit_stdin()
        elif stdin is not None:
            with open(f"{tmp}/stdin", "wb") as f:
                f.write(stdin)
            wasi.stdin_file = f"{tmp}/stdin"
        store = Store(_engine)
        store.set_wasi(wasi)
        linker = Linker(_engine)
        linker.add_wasip2()
        instance = linker.instantiate(store, _components[component])
        iface = instance.get_export_index(store, "wasi:cli/run@0.2.0")  # any 0.2.x
        func = instance.get_func(store, instance.get_export_index(store, "run", iface))
        try:
            result = func(store)
            func.post_return(store)
            code = 0 if result.tag == "ok" else 1
        except ExitTrap as e:  # wasi:cli/exit, as `wasmtime run` ends with its code
            code = e.code
        with open(f"{tmp}/stdout", "rb") as out, open(f"{tmp}/stderr", "rb") as err:
            return code, out.read(), err.read()


def main(argv):
    component, rest, dirs, env = argv[0], argv[1:], [], []
    while len(rest) > 1 and rest[0] in ("--dir", "--env"):
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--dir":  # HOST::GUEST, or DIR as itself
            dirs.append(tuple(value.split("::", 1)) if "::" in value else (value, value))
        else:
            env.append(tuple(value.split("=", 1)))
    rest = rest[1:] if rest[:1] == ["--"] else rest
    code, out, err = run(component, rest, dirs, env, inherit_stdin=True)
    try:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (`| head`): a normal end
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.stderr.buffer.write(err)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
