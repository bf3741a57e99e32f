"""The WASI command under wasmtime-py with one preopened directory and nothing else.

What it prints equals, byte for byte, what the native core prints for the same files
(`examples/show.rs`, `examples/context.rs`); paths outside the preopen are refused and
nothing is written there.

Needs XCSH_WASI_COMMAND (the built component) and XCSH_NATIVE_EXAMPLES (the directory of
the built `show` and `context` examples); scripts/test-wasi-command sets both.
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from run import run

COMPONENT = os.environ["XCSH_WASI_COMMAND"]
EXAMPLES = os.environ["XCSH_NATIVE_EXAMPLES"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "real", "large-session.jsonl")

GUEST = "/data"
AGENT = "/data/agent"
PROJECT = "/work/pi"
# Where the core keeps the sessions of PROJECT under AGENT (paths::session_dir_for_cwd).
SESSIONS = f"{AGENT}/sessions/--work-pi--"


def native(example, path, *args):
    """The native core's output for a host file: `show` or `context` (its stdout bytes)."""
    return subprocess.run([os.path.join(EXAMPLES, example), path, *args],
                          check=True, capture_output=True).stdout


def read(path):
    with open(path, "rb") as f:
        return f.read()


def user(text):
    return json.dumps({"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}})


def reply(text):
    return json.dumps({"type": "message", "message": {
        "role": "assistant", "content": [{"type": "text", "text": text}],
        "provider": "p", "model": "m", "timestamp": 2}})


class Sandbox(unittest.TestCase):
    """A temp dir `box` preopened as /data, with a sibling `outside` that is not."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="xcsh-wasi-py-")
        self.addCleanup(tmp.cleanup)
        base = os.path.realpath(tmp.name)
        self.box = os.path.join(base, "box")
        self.outside = os.path.join(base, "outside")
        os.makedirs(self.box)
        os.makedirs(self.outside)

    def host(self, guest):
        """The host path of a guest path under /data."""
        self.assertTrue(guest.startswith(GUEST + "/"), guest)
        return os.path.join(self.box, guest[len(GUEST) + 1:])

    def wasi(self, *args, stdin=None, env=(("HOME", "/data/home"),)):
        return run(COMPONENT, list(args), dirs=[(self.box, GUEST)], env=env, stdin=stdin)

    def ok(self, *args, stdin=None):
        code, out, err = self.wasi(*args, stdin=stdin)
        self.assertEqual((code, err), (0, b""), f"{args}: {err!r}")
        self.assertTrue(out.endswith(b"\n"), out)
        return out

    def refused(self, *args, says, code=1):
        """A run that fails with exit `code` (the CLI host's: 1 error, 2 usage, 3 not
        found), prints nothing on stdout and says each of `says` on stderr."""
        status, out, err = self.wasi(*args)
        self.assertEqual(status, code, f"{args}: {out!r} {err!r}")
        self.assertEqual(out, b"")
        for s in says:
            self.assertIn(s, err.decode(), args)
        return err.decode()

    def tree_of(self, top):
        """Every file and directory under `top`."""
        return sorted(os.path.join(d, n) for d, dirs, files in os.walk(top) for n in dirs + files)


class Scenario(Sandbox):
    def test_the_scenario_prints_what_the_native_core_prints(self):
        file = f"{SESSIONS}/s.jsonl"
        first = json.loads(self.ok("--agent-dir", AGENT, "append", file, "--json", user("hello"),
                                   "--cwd", PROJECT))["id"]
        # A second entry through stdin (`--json -`), as the CLI host reads it.
        second = json.loads(self.ok("append", file, "--json", "-", "--cwd", PROJECT,
                                    "--agent-dir", AGENT, stdin=reply("hi there").encode()))["id"]
        self.assertRegex(first, r"^[0-9a-f]{8}$")
        host_file = self.host(file)
        lines = read(host_file).decode().splitlines()
        self.assertEqual(len(lines), 3)
        self.assertEqual(json.loads(lines[0])["cwd"], PROJECT)
        self.assertEqual(json.loads(lines[2])["parentId"], first)
        # An append (a writing command) keeps the file's index in the agent's cache, so
        # that the next one reads it instead of the file; removed here, so that what the
        # read-only commands below leave is seen.
        self.assertEqual(len(os.listdir(self.host(f"{AGENT}/cache/index"))), 1)
        shutil.rmtree(self.host(f"{AGENT}/cache"))

        show = self.ok("--agent-dir", AGENT, "show", file, "--json")
        self.assertEqual(show, native("show", host_file))
        self.assertEqual(json.loads(show)["leafId"], second)
        self.assertEqual(self.ok("--agent-dir", AGENT, "context", file), native("context", host_file))
        self.refused("--agent-dir", AGENT, "context", file, "--leaf", "nope", says=["Entry nope not found"], code=3)
        at_first = self.ok("--agent-dir", AGENT, "context", file, "--leaf", first)
        self.assertEqual(at_first, native("context", host_file, first))
        self.assertEqual(len(json.loads(at_first)["messages"]), 1)
        # The context was read through the file's index (ranged reads over
        # wasi:filesystem); a read-only command of this sandbox keeps no index cache.
        self.assertFalse(os.path.exists(self.host(f"{AGENT}/cache")))

        tree = json.loads(self.ok("--agent-dir", AGENT, "tree", file))
        self.assertEqual([n["entry"]["id"] for n in tree], [first])
        self.assertEqual([c["entry"]["id"] for c in tree[0]["children"]], [second])
        self.assertEqual(tree[0]["children"][0]["entry"], json.loads(lines[2]))

        fork = json.loads(self.ok("--agent-dir", AGENT, "fork", file))
        self.assertEqual(fork["oldFile"], file)
        self.assertEqual(os.path.dirname(fork["newFile"]), SESSIONS)
        host_fork = self.host(fork["newFile"])
        self.assertTrue(os.path.isfile(host_fork))
        # Reopened: the copy shows and builds its context as the native core reads it.
        self.assertEqual(self.ok("--agent-dir", AGENT, "show", fork["newFile"]), native("show", host_fork))
        self.assertEqual(self.ok("--agent-dir", AGENT, "context", fork["newFile"]),
                         native("context", host_fork))

        listed = json.loads(self.ok("--agent-dir", AGENT, "list", "--cwd", PROJECT))
        self.assertEqual(sorted(i["path"] for i in listed), sorted([file, fork["newFile"]]))
        self.assertEqual(json.loads(self.ok("--agent-dir", AGENT, "list", "--all")), listed)
        # A first screen: only the newest files are read, each listed as in the whole list.
        first = json.loads(self.ok("--agent-dir", AGENT, "list", "--cwd", PROJECT, "--limit", "1"))
        self.assertEqual(len(first), 1)
        self.assertIn(first[0], listed)
        every = json.loads(self.ok("--agent-dir", AGENT, "list", "--all", "--limit", "5"))
        self.assertEqual(sorted(i["path"] for i in every), sorted(i["path"] for i in listed))
        recent = json.loads(self.ok("--agent-dir", AGENT, "recent", "--cwd", PROJECT, "--limit", "1"))
        self.assertEqual(len(recent), 1)
        # Nothing but the sessions was written: no lock or temp file left behind.
        self.assertEqual(sorted(os.listdir(self.host(SESSIONS))),
                         sorted([os.path.basename(file), os.path.basename(fork["newFile"])]))

    def test_a_v1_file_is_migrated_in_place_with_a_backup(self):
        shutil.copy(FIXTURE, os.path.join(self.box, "old.jsonl"))
        before = read(FIXTURE)
        self.assertTrue(json.loads(self.ok("--agent-dir", AGENT, "show", "/data/old.jsonl"))["migrationNeeded"])
        self.assertEqual(read(os.path.join(self.box, "old.jsonl")), before,
                         "show changed the file")
        report = json.loads(self.ok("--agent-dir", AGENT, "migrate", "/data/old.jsonl"))
        self.assertEqual(report["migration"]["fromVersion"], 1)
        backup = self.host(report["backupPath"])
        self.assertEqual(read(backup), before)
        host_file = os.path.join(self.box, "old.jsonl")
        show = self.ok("--agent-dir", AGENT, "show", "/data/old.jsonl")
        self.assertFalse(json.loads(show)["migrationNeeded"])
        self.assertEqual(show, native("show", host_file))
        self.assertEqual(self.ok("--agent-dir", AGENT, "context", "/data/old.jsonl"),
                         native("context", host_file))


class Refusals(Sandbox):
    def test_paths_outside_the_preopen_are_refused_and_nothing_is_written_there(self):
        with open(os.path.join(self.outside, "secret.jsonl"), "w") as f:
            f.write('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/x"}\n')
        before = self.tree_of(self.outside)
        outside = ["permission denied", "outside the preopened directories: /data"]
        self.refused("show", "/etc/passwd", says=["/etc/passwd", *outside])
        self.refused("show", "/data/../etc/passwd", says=["/etc/passwd", *outside])
        self.refused("context", "/data/../outside/secret.jsonl",
                     says=["/outside/secret.jsonl", *outside])
        self.refused("append", "/data/../outside/new.jsonl", "--json", user("x"), "--cwd", PROJECT,
                     says=["/outside/new.jsonl", *outside])
        self.refused("append", "/etc/xcsh-wasi-test.jsonl", "--json", user("x"), "--cwd", PROJECT,
                     says=["/etc/xcsh-wasi-test.jsonl", *outside])
        self.assertFalse(os.path.exists("/etc/xcsh-wasi-test.jsonl"))
        # A symlink inside the preopen that leads outside: the runtime refuses to follow it.
        os.symlink(self.outside, os.path.join(self.box, "link"))
        self.refused("show", "/data/link/secret.jsonl", says=["/data/link/secret.jsonl", "permission denied"])
        self.refused("append", "/data/link/new.jsonl", "--json", user("x"), "--cwd", PROJECT,
                     says=["/data/link/new.jsonl", "permission denied"])
        self.assertEqual(self.tree_of(self.outside), before)
        self.assertEqual(os.listdir(self.box), ["link"])

    def test_a_missing_file_is_not_created_by_the_commands_that_read(self):
        for cmd in ("show", "context", "tree", "migrate"):
            err = self.refused(cmd, "/data/missing.jsonl", says=[], code=3)
            self.assertEqual(err, "Session file /data/missing.jsonl not found\n")
        self.assertEqual(os.listdir(self.box), [])

    def test_bad_json_gets_a_clear_error_and_changes_nothing(self):
        self.ok("append", "/data/s.jsonl", "--json", user("hello"), "--cwd", PROJECT)
        before = read(os.path.join(self.box, "s.jsonl"))
        err = self.refused("append", "/data/s.jsonl", "--json", '{"type":"message",', "--cwd", PROJECT,
                           says=[])
        self.assertRegex(err, r"(?i)json")
        self.assertEqual(err.count("\n"), 1, err)
        self.assertEqual(read(os.path.join(self.box, "s.jsonl")), before)
        # A file of which nothing reads as a session (no header, no entry): refused as the
        # native core and the viewer refuse it, not shown with an invented header.
        with open(os.path.join(self.box, "junk.jsonl"), "w") as f:
            f.write("not json\n{\"type\":\n")
        self.refused("show", "/data/junk.jsonl",
                     says=["/data/junk.jsonl is not a session file: no session header found"])
        # A session whose lines are damaged after its header: read leniently, every bad
        # line reported, exactly as the native core reports it.
        with open(os.path.join(self.box, "damaged.jsonl"), "wb") as f:
            f.write(read(os.path.join(self.box, "s.jsonl")) + b"not json\n{\"type\":\n")
        show = json.loads(self.ok("show", "/data/damaged.jsonl"))
        reference = json.loads(native("show", os.path.join(self.box, "damaged.jsonl")))
        self.assertEqual(show["report"], reference["report"])
        self.assertEqual(len(show["report"]["issues"]), 2)

    def test_a_lock_left_behind_is_reported_and_not_taken_over(self):
        self.ok("append", "/data/s.jsonl", "--json", user("hello"), "--cwd", PROJECT)
        file, lock = os.path.join(self.box, "s.jsonl"), os.path.join(self.box, "s.jsonl.lock")
        before = read(file)
        with open(lock, "w") as f:  # what a killed run of this command leaves
            f.write('{"pid":0,"host":"wasi","startedAt":"2026-01-01T00:00:00.000Z","token":"t"}\n')
        self.refused("append", "/data/s.jsonl", "--json", user("again"), "--cwd", PROJECT,
                     says=["session /data/s.jsonl is being written by another process "
                           "(pid 0 on wasi since 2026-01-01T00:00:00.000Z)"])
        self.assertEqual(read(file), before)
        self.assertTrue(os.path.exists(lock))
        os.unlink(lock)
        self.ok("append", "/data/s.jsonl", "--json", user("again"), "--cwd", PROJECT)
        self.assertFalse(os.path.exists(lock), "the lock is released")
        # Beside the session, only the agent's index cache (in $HOME/.xcsh/agent).
        left = [os.path.relpath(os.path.join(d, f), self.box) for d, _, fs in os.walk(self.box) for f in fs]
        self.assertEqual([f for f in left if not f.startswith("home/.xcsh/agent/cache/index/")], ["s.jsonl"])

    def test_usage_help_and_missing_settings(self):
        code, out, err = self.wasi("--help")
        self.assertEqual((code, err), (0, b""))
        self.assertIn(b"Usage: xcsh-session [--agent-dir DIR] <COMMAND>", out)
        self.refused("frobnicate", says=["error: unrecognized subcommand 'frobnicate'", "--help"], code=2)
        self.refused("append", "/data/s.jsonl", says=["--json <ENTRY-JSON | ->"], code=2)
        self.refused("context", "/data/s.jsonl", "--leaf", says=["a value is required"], code=2)
        code, out, err = self.wasi("show", "/data/s.jsonl", env=())
        self.assertEqual((code, out, err), (1, b"", b"xcsh-session: HOME is not set; pass --agent-dir\n"))
        self.refused("show", "s.jsonl", says=["relative path", "absolute guest path"])
        self.refused("append", "/data/s.jsonl", "--json", user("x"), says=["pass --cwd"])
        self.assertEqual(os.listdir(self.box), [])


class HardLinks(Sandbox):
    def test_a_session_hard_linked_to_an_outside_file_is_neither_read_nor_written(self):
        secret = os.path.join(self.outside, "secret.jsonl")
        before = b'{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/x"}\n'
        with open(secret, "wb") as f:
            f.write(before)
        os.link(secret, os.path.join(self.box, "s.jsonl"))
        says = ["permission denied", "/data/s.jsonl", "hard link", "2 names"]
        self.refused("show", "/data/s.jsonl", says=says)
        self.refused("context", "/data/s.jsonl", says=says)
        self.refused("append", "/data/s.jsonl", "--json", user("x"), "--cwd", PROJECT, says=says)
        self.refused("migrate", "/data/s.jsonl", says=says)
        self.assertEqual(read(secret), before)
        self.assertEqual(os.stat(secret).st_nlink, 2)
        self.assertEqual(os.listdir(self.box), ["s.jsonl"], "no lock or backup left behind")


class NestedPreopens(unittest.TestCase):
    """The agent dir preopened as /a and one project's sessions dir, a directory of its
    own on the host, preopened inside it (`--dir agent::/a --dir proj::/a/sessions/--p--`)."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="xcsh-wasi-py-nested-")
        self.addCleanup(tmp.cleanup)
        base = os.path.realpath(tmp.name)
        self.agent = os.path.join(base, "agent")
        self.proj = os.path.join(base, "proj")
        os.makedirs(self.agent)
        os.makedirs(self.proj)

    def ok(self, *args):
        dirs = [(self.agent, "/a"), (self.proj, "/a/sessions/--p--")]
        code, out, err = run(COMPONENT, ["--agent-dir", "/a", *args], dirs=dirs)
        self.assertEqual((code, err), (0, b""), f"{args}: {err!r}")
        return json.loads(out)

    def test_an_image_in_the_inner_preopen_is_listed_and_its_blob_kept_by_gc(self):
        image = base64.b64encode(b"ABC" * 300).decode()
        digest = hashlib.sha256(b"ABC" * 300).hexdigest()
        entry = json.dumps({"type": "message", "message": {
            "role": "user", "content": [{"type": "image", "data": image, "mimeType": "image/png"}],
            "timestamp": 1}})
        inner = "/a/sessions/--p--/s.jsonl"
        outer = "/a/sessions/--q--/t.jsonl"
        self.ok("append", inner, "--json", entry, "--cwd", "/p")
        self.ok("append", outer, "--json", user("in the outer preopen"), "--cwd", "/q")
        self.assertTrue(os.path.isfile(os.path.join(self.proj, "s.jsonl")))
        blob = os.path.join(self.agent, "blobs", digest)
        self.assertTrue(os.path.isfile(blob))

        self.assertEqual(sorted(i["path"] for i in self.ok("list", "--all")), [inner, outer])
        self.assertEqual([i["path"] for i in self.ok("list", "--cwd", "/p")], [inner])

        os.utime(blob, (0, 0))  # older than the hour gc leaves alone
        report = self.ok("gc", "--delete")
        self.assertEqual(report["deleted"], [], report)
        self.assertTrue(os.path.isfile(blob), "the image of the inner session was deleted")
        # Gone with its session, the image is collected.
        os.unlink(os.path.join(self.proj, "s.jsonl"))
        self.assertEqual(self.ok("gc", "--delete")["deleted"], [digest])


class Finding(Sandbox):
    """search, resume, move and gc: the commands that find and move sessions."""

    def session(self, cwd, *texts):
        """A session of project `cwd` with a user prompt and a reply per text; its guest path."""
        sessions = f"{AGENT}/sessions/--{cwd.strip('/').replace('/', '-')}--"
        file = None
        for text in texts:
            made = json.loads(self.ok("--agent-dir", AGENT, "append", file or f"{sessions}/{text}.jsonl",
                                      "--json", user(text), "--cwd", cwd))
            self.assertIn("id", made)
            file = file or f"{sessions}/{text}.jsonl"
            self.ok("--agent-dir", AGENT, "append", file, "--json", reply(f"about {text}"), "--cwd", cwd)
        return file

    def header_id(self, file):
        return json.loads(read(self.host(file)).decode().splitlines()[0])["id"]

    def test_search_ranks_the_sessions_of_a_project_or_of_all(self):
        pasta = self.session(PROJECT, "pasta")
        self.session(PROJECT, "bicycles")
        other = self.session("/work/other", "pasta-sauce")
        hits = json.loads(self.ok("--agent-dir", AGENT, "search", "pasta", "--cwd", PROJECT))
        self.assertEqual([h["path"] for h in hits], [pasta])
        self.assertTrue(all("score" in h for h in hits))
        everywhere = json.loads(self.ok("--agent-dir", AGENT, "search", "pasta", "--all"))
        self.assertEqual(sorted(h["path"] for h in everywhere), sorted([pasta, other]))
        self.refused("search", "x", "--cwd", PROJECT, "--all", says=["cannot be used with '--all'"], code=2)

    def test_resume_by_prefix_path_ambiguity_and_another_project(self):
        first = self.session(PROJECT, "first")
        second = self.session(PROJECT, "second")
        other = self.session("/work/other", "elsewhere")
        before = self.tree_of(self.box)
        prefix = self.header_id(first)  # ids made in the same second share their start
        self.assertEqual(self.ok("--agent-dir", AGENT, "resume", prefix, "--cwd", PROJECT).decode(), first + "\n")
        self.assertEqual(json.loads(self.ok("--agent-dir", AGENT, "resume", prefix, "--cwd", PROJECT, "--json")),
                         {"path": first})
        self.assertEqual(self.ok("--agent-dir", AGENT, "resume", second, "--cwd", PROJECT).decode(), second + "\n")
        # Another project's session: exit 4 without --yes, nothing written.
        status, out, err = self.wasi("--agent-dir", AGENT, "resume", self.header_id(other), "--cwd", PROJECT)
        self.assertEqual(status, 4, err)
        self.assertEqual(self.tree_of(self.box), before)
        # --yes forks it into this project.
        copy = self.ok("--agent-dir", AGENT, "resume", self.header_id(other), "--cwd", PROJECT, "--yes").decode().strip()
        self.assertEqual(os.path.dirname(copy), SESSIONS)
        self.assertEqual(json.loads(read(self.host(copy)).decode().splitlines()[0])["cwd"], PROJECT)
        self.refused("--agent-dir", AGENT, "resume", "ffffffff", "--cwd", PROJECT, says=["ffffffff"], code=3)

    def test_an_ambiguous_prefix_prints_the_candidates_and_exits_2(self):
        a = self.session(PROJECT, "alpha")
        b = self.session(PROJECT, "beta")
        # Make both ids start alike: rewrite the headers' ids (the file names keep theirs).
        for f, new in ((a, "abcd0000-0000-4000-8000-000000000001"), (b, "abcd0000-0000-4000-8000-000000000002")):
            lines = read(self.host(f)).decode().splitlines()
            header = json.loads(lines[0])
            header["id"] = new
            with open(self.host(f), "w") as out:
                out.write("\n".join([json.dumps(header)] + lines[1:]) + "\n")
        code, out, err = self.wasi("--agent-dir", AGENT, "resume", "abcd", "--cwd", PROJECT)
        self.assertEqual(code, 2, err)
        self.assertEqual(sorted(c["path"] for c in json.loads(out)), sorted([a, b]))
        self.assertIn("abcd", err.decode())

    def test_move_puts_a_session_in_another_project(self):
        file = self.session(PROJECT, "moving")
        moved = json.loads(self.ok("--agent-dir", AGENT, "move", file, "--to-cwd", "/work/new"))
        self.assertEqual(os.path.dirname(moved["newFile"]), f"{AGENT}/sessions/--work-new--")
        self.assertFalse(os.path.exists(self.host(file)))
        self.assertEqual(json.loads(read(self.host(moved["newFile"])).decode().splitlines()[0])["cwd"], "/work/new")
        self.refused("--agent-dir", AGENT, "move", file, says=["--to-cwd <DIR>"], code=2)

    def test_gc_reports_by_default_and_deletes_only_when_asked(self):
        self.session(PROJECT, "kept")
        blobs = os.path.join(self.host(AGENT), "blobs")
        os.makedirs(blobs)
        orphan = os.path.join(blobs, "0" * 64)
        with open(orphan, "wb") as f:
            f.write(b"nobody refers to me")
        os.utime(orphan, (0, 0))  # older than the hour gc leaves alone
        dry = json.loads(self.ok("--agent-dir", AGENT, "gc"))
        self.assertTrue(dry["dryRun"])
        self.assertTrue(os.path.exists(orphan))
        done = json.loads(self.ok("--agent-dir", AGENT, "gc", "--delete"))
        self.assertFalse(done["dryRun"])
        self.assertFalse(os.path.exists(orphan))
        self.assertEqual([done["keptPinned"], done["missing"], done["forgotten"]], [[], [], []])
        records = os.path.join(self.host(AGENT), "blob-referrers.jsonl")
        # A recorded session outside every preopen cannot be read here (it may exist on
        # the host): refused, and forgetting does not apply (it is not known to be gone).
        with open(records, "w") as f:
            f.write('{"path":"/elsewhere/s.jsonl","notedMs":1,"pins":[]}\n')
        for extra in [[], ["--forget-missing"]]:
            self.refused("--agent-dir", AGENT, "gc", "--delete", *extra,
                         says=["outside the preopened directories", "nothing was deleted"], code=1)
        # One inside the preopens that is gone, its blobs unknown: refused until forgotten.
        gone = os.path.join(os.path.dirname(AGENT), "gone", "s.jsonl")
        with open(records, "w") as f:
            f.write(json.dumps({"path": gone, "notedMs": 1}) + "\n")
        self.refused("--agent-dir", AGENT, "gc", "--delete", says=["--forget-missing"], code=1)
        forgot = json.loads(self.ok("--agent-dir", AGENT, "gc", "--delete", "--forget-missing"))
        self.assertEqual(forgot["forgotten"], [gone])
        self.refused("gc", "--dry-run", "--delete", says=["cannot be used with '--delete'"], code=2)


if __name__ == "__main__":
    unittest.main()
