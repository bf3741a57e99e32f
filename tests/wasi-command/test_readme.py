"""Every example of crates/wasi-command/README.md runs as written.

Blocks, by their info string (the conventions of tests/readme):
  ```console  each `$ ` line is a command run by bash with pipefail, stdout and stderr
              together; the lines up to the next `$ ` are its output, `…` standing for any
              text; every command must exit 0.
  ```text     not code, except a `wasmtime run ...` command line: the wasmtime CLI is not
              installed here, so it runs through wasmtime-py (run.py) with the same
              --dir/--env flags, component and arguments, after the console blocks.
Any other block fails the test.

The blocks run in order in one scratch directory holding `target` and `tests` of this
repository, with Python (wasmtime-py) first on PATH. Needs XCSH_PY and the built
component (scripts/test-wasi-command).
"""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

from run import run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "crates", "wasi-command", "README.md")
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
PY = os.environ["XCSH_PY"]


def blocks(markdown):
    """The fenced code blocks: (info string, lines)."""
    out, info, lines = [], None, []
    for line in markdown.split("\n"):
        if line.startswith("```"):
            if info is None:
                info, lines = line[3:].strip(), []
            else:
                out.append((info, lines))
                info = None
        elif info is not None:
            lines.append(line)
    assert info is None, "an unclosed code block"
    return out


def steps(lines):
    """A console block as [(command, [expected line])]."""
    out = []
    for line in lines:
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            out[-1][1].append(line)
    return out


def matches(expected, actual):
    pattern = "".join(".*" if part == "…" else re.escape(part) for part in re.split("(…)", expected))
    return re.fullmatch(pattern, actual) is not None


def logical_lines(lines):
    """Lines with their `\\` continuations joined."""
    out, pending = [], ""
    for line in lines:
        if line.endswith("\\"):
            pending += line[:-1]
        else:
            out.append(pending + line)
            pending = ""
    return out


def wasmtime_cli(line):
    """`wasmtime run [--dir D | --env E]... WASM ARGS...` as (wasm, dirs, env, args)."""
    words = shlex.split(line)
    assert words[:2] == ["wasmtime", "run"], line
    words, dirs, env = words[2:], [], []
    while words[0] in ("--dir", "--env"):
        flag, value, words = words[0], words[1], words[2:]
        if flag == "--dir":
            dirs.append(tuple(value.split("::", 1)))
        else:
            env.append(tuple(value.split("=", 1)))
    return words[0], dirs, env, words[1:]


class Readme(unittest.TestCase):
    def test_every_example_runs_as_written(self):
        with open(README, encoding="utf-8") as f:
            found = blocks(f.read())
        scratch = tempfile.mkdtemp(prefix="xcsh-wasi-readme-")
        self.addCleanup(shutil.rmtree, scratch)
        os.symlink(TARGET, os.path.join(scratch, "target"))
        os.symlink(os.path.join(ROOT, "tests"), os.path.join(scratch, "tests"))
        env = dict(os.environ, PATH=f"{os.path.dirname(PY)}:{os.environ['PATH']}")
        ran, cli = 0, []
        for info, lines in found:
            if info == "text":
                cli += [l for l in logical_lines(lines) if l.startswith("wasmtime run")]
                continue
            self.assertEqual(info, "console", f"a ```{info} block nobody runs")
            for command, expected in steps(lines):
                r = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=scratch, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   stdin=subprocess.DEVNULL, timeout=120)
                self.assertEqual(r.returncode, 0, f"{command}\n{r.stdout}")
                actual = r.stdout.split("\n")
                if actual[-1] == "":
                    actual.pop()
                self.assertEqual(len(actual), len(expected), f"{command}\n{r.stdout}")
                for e, a in zip(expected, actual):
                    self.assertTrue(matches(e, a), f"{command}\nwant {e!r}\ngot  {a!r}")
                ran += 1
        self.assertGreaterEqual(ran, 8)
        self.assertEqual(len(cli), 1, "the README's wasmtime CLI command line")
        for line in cli:
            wasm, dirs, wenv, args = wasmtime_cli(line)
            dirs = [(os.path.join(scratch, h), g) for h, g in dirs]
            code, out, err = run(os.path.join(scratch, wasm), args, dirs=dirs, env=wenv)
            self.assertEqual((code, err), (0, b""), line)
            self.assertTrue(out.startswith(b'{"header":{"type":"session"'), out)


if __name__ == "__main__":
    unittest.main()
