"""The component's `session` resource driven from wasmtime-py: create, append, label,
branch, name, context, fork, reopen. Contexts equal the native core's, byte for byte, and
`session-api`'s typed results say what `session-json` (the CLI's text) says.

Needs XCSH_COMPONENT (the built component) and cargo (`cargo run --example context`).
"""
import datetime
import json
import os
import subprocess
import tempfile
import unittest

from host import ApiError, SessionApi, field

COMPONENT = os.environ["XCSH_COMPONENT"]


def native(path, leaf=None):
    args = ["cargo", "run", "-q", "--example", "context", "--", path] + ([leaf] if leaf else [])
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.rstrip("\n")


def user(text):
    return json.dumps({"role": "user", "content": text, "timestamp": 1})


def reply(text):
    return json.dumps({"role": "assistant", "content": [{"type": "text", "text": text}],
                       "provider": "p", "model": "m", "timestamp": 2})


class SessionResource(unittest.TestCase):
    def setUp(self):
        self.api = SessionApi(COMPONENT)
        self.tmp = tempfile.TemporaryDirectory(prefix="xcsh-wasmtime-py-")
        self.agent = os.path.join(os.path.realpath(self.tmp.name), "agent")

    def tearDown(self):
        self.tmp.cleanup()

    def m(self, method, session, *args):
        return self.api.call(f"[method]session.{method}", session, *args)

    def test_the_scenario_equals_the_native_core(self):
        s = self.api.call("[static]session.create", self.agent, "/work/pi", None, None)
        first = self.m("append-message", s, user("hello"))
        self.assertFalse(self.m("is-on-disk", s), "acknowledged, in memory only")
        self.assertFalse(os.path.exists(self.m("file", s)))
        self.m("append-message", s, reply("hi there"))
        path = self.m("file", s)
        self.assertTrue(os.path.exists(path))
        self.assertTrue(self.m("is-on-disk", s))
        self.m("append-label", s, first, "start")
        self.assertEqual(self.m("label", s, first), "start")
        self.m("branch", s, first)
        other = self.m("append-message", s, reply("another answer"))
        self.assertEqual(self.m("leaf-id", s), other)
        self.assertTrue(self.m("set-name", s, "The pi session", "user"))
        self.assertEqual(self.m("header", s).title, "The pi session")

        context = self.m("context", s, None)
        self.assertEqual(context, native(path))
        self.assertEqual(self.m("context", s, first), native(path, first))
        tree = json.loads(self.m("tree", s))
        self.assertEqual(tree[0]["label"], "start")
        self.assertEqual(len(tree[0]["children"]), 2)

        with self.assertRaises(ApiError) as caught:
            self.m("entry", s, "nope")
        self.assertEqual(caught.exception.kind, "entry-not-found")
        self.assertEqual(caught.exception.message, "Entry nope not found")

        forked = self.m("fork", s)
        self.assertNotEqual(field(forked, 'old_file'), field(forked, 'new_file'))
        self.m("close", s)
        s.drop(self.api.store)

        again = self.api.call("[static]session.open", field(forked, 'new_file'), self.agent, "/work/pi", True)
        self.assertEqual(self.m("context", again, None), native(field(forked, 'new_file')))
        self.assertEqual(self.m("entry-count", again), 4)
        with self.assertRaises(ApiError) as caught:
            self.m("append-message", again, user("x"))
        self.assertEqual(caught.exception.kind, "read-only")
        with open(field(forked, 'new_file')) as f:
            self.assertEqual(self.m("id", again), json.loads(f.readline())["id"])

    def test_a_large_file_is_read_through_the_reader_resource(self):
        path = os.path.join(os.path.realpath(self.tmp.name), "big.jsonl")
        header = {"type": "session", "version": 3, "id": "big", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
        big = {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "x" * (5 << 20), "timestamp": 1}}
        with open(path, "w") as f:
            f.write(json.dumps(header) + "\n" + json.dumps(big) + "\n")
        s = self.api.call("[static]session.open", path, self.agent, "/w", True)
        self.assertEqual(self.m("context", s, None), native(path))

    def test_the_output_sink_spills_to_an_artifact(self):
        s = self.api.call("[static]session.create", self.agent, "/work/pi", None, None)
        self.m("append-message", s, user("run"))
        self.m("append-message", s, reply("ok"))
        slot = self.m("allocate-artifact-path", s, "bash")
        sink = self.api.call("[constructor]output-sink", slot.path, slot.id, 100, None)
        for _ in range(5):
            self.api.call("[method]output-sink.push", sink, "y" * 49 + "\n")
        d = self.api.call("[method]output-sink.dump", sink, "exit code 0")
        self.assertTrue(d.truncated)
        self.assertEqual(field(d, 'artifact_id'), slot.id)
        with open(slot.path) as f:
            self.assertEqual(f.read(), ("y" * 49 + "\n") * 5)


def iso(ms):
    """Epoch milliseconds as the JSON's ISO-8601 (`...T10:20:30.123Z`)."""
    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def info_as_json(i):
    """A typed session-info as the JSON prints it (absent title and parent left out)."""
    out = {"path": i.path, "id": i.id, "cwd": i.cwd}
    if i.title is not None:
        out["title"] = i.title
    if field(i, "parent_session_path") is not None:
        out["parentSessionPath"] = field(i, "parent_session_path")
    out.update(created=i.created, modified=iso(field(i, "modified_ms")),
               messageCount=field(i, "message_count"), firstMessage=field(i, "first_message"),
               allMessagesText=field(i, "all_messages_text"))
    return out


class TypedResults(unittest.TestCase):
    """`session-api`'s records, field by field against `session-json`'s text."""

    def setUp(self):
        self.api = SessionApi(COMPONENT)
        self.tmp = tempfile.TemporaryDirectory(prefix="xcsh-wasmtime-py-")
        self.root = os.path.realpath(self.tmp.name)
        self.agent = os.path.join(self.root, "agent")
        self.cwd = os.path.join(self.root, "project")

    def tearDown(self):
        self.tmp.cleanup()

    def m(self, method, session, *args):
        return self.api.call(f"[method]session.{method}", session, *args)

    def session(self, question, name=None):
        s = self.api.call("[static]session.create", self.agent, self.cwd, None, None)
        self.m("append-message", s, user(question))
        self.m("append-message", s, reply("an answer"))
        if name:
            self.m("set-name", s, name, "user")
        path = self.m("file", s)
        self.m("close", s)
        s.drop(self.api.store)
        return path

    def test_show_header_and_report(self):
        path = os.path.join(self.root, "old.jsonl")
        with open(path, "w") as f:
            f.write("\n".join([
                json.dumps({"type": "session", "id": "old", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"}),
                json.dumps({"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
                            "message": {"role": "user", "content": "hi", "timestamp": 1}}),
                "not json",
                '{"type":"message","timest',
            ]))
        typed = self.api.call("show", path, self.agent)
        text = json.loads(self.api.call_json("show", path, self.agent))
        header = typed.header
        self.assertEqual(json.loads(header.json), text["header"])
        self.assertEqual((header.id, header.timestamp, header.cwd, header.title),
                         (text["header"]["id"], text["header"]["timestamp"], text["header"]["cwd"], None))
        self.assertEqual(header.version, 3)
        self.assertEqual(field(typed, "entry_count"), text["entryCount"])
        self.assertEqual(field(typed, "leaf_id"), text["leafId"])
        self.assertEqual(typed.version, text["version"])
        self.assertEqual(field(typed, "migration_needed"), text["migrationNeeded"])
        report = typed.report
        kinds = {"unparsable": "unparsable", "torn-tail": "tornTail", "glued-record": "gluedRecord"}
        self.assertEqual([{"line": i.line, "kind": kinds[i.kind], "detail": i.detail} for i in report.issues],
                         text["report"]["issues"])
        self.assertEqual(len(field(report, "non_entries")), text["report"]["nonEntries"])
        migration = report.migration
        self.assertEqual({"fromVersion": field(migration, "from_version"), "toVersion": field(migration, "to_version"),
                          "entriesChanged": field(migration, "entries_changed")}, text["report"]["migration"])
        self.assertEqual(field(report, "file_version"), 1)

        s = self.api.call("[static]session.open", path, self.agent, "/w", True)
        self.assertEqual(json.loads(self.m("header", s).json), text["header"])
        self.assertEqual([i.kind for i in self.m("report", s).issues], ["unparsable", "torn-tail"])
        with self.assertRaises(ApiError) as caught:
            self.api.call("show", os.path.join(self.root, "missing.jsonl"), self.agent)
        self.assertEqual(caught.exception.kind, "not-found")

    def test_recent_list_and_resume(self):
        first = self.session("the first question")
        self.session("the second question", name="Second")
        recent = self.api.call("recent", self.agent, self.cwd, 10)
        want = json.loads(self.api.call_json("recent", self.agent, self.cwd, 10))
        got = []
        for r in recent:
            item = {"path": r.path, "id": r.id, "cwd": r.cwd}
            if r.title is not None:
                item["title"] = r.title
            item.update(name=r.name, fullName=field(r, "full_name"), timeAgo=field(r, "time_ago"),
                        modified=iso(field(r, "modified_ms")))
            got.append(item)
        self.assertEqual(got, want)
        self.assertEqual(len(got), 2)

        listed = self.api.call("list", self.agent, self.cwd)
        self.assertEqual([info_as_json(i) for i in listed],
                         json.loads(self.api.call_json("list", self.agent, self.cwd)))
        hits = self.api.call("search", self.agent, None, "second")
        # A hit holds no text (each session's is read a piece at a time, and not kept).
        self.assertTrue(all(field(h.session, "all_messages_text") == "" for h in hits))
        without_text = [{k: v for k, v in info_as_json(h.session).items() if k != "allMessagesText"}
                        for h in hits]
        self.assertEqual([dict(score=h.score, **i) for h, i in zip(hits, without_text)],
                         json.loads(self.api.call_json("search", self.agent, None, "second")))
        self.assertEqual(hits[0].session.title, "Second")

        with open(first) as f:
            prefix = json.loads(f.readline())["id"]
        self.assertEqual(self.api.call("resume", self.agent, self.cwd, prefix, False),
                         json.loads(self.api.call_json("resume", self.agent, self.cwd, prefix, False))["path"])
        self.assertEqual(self.api.call("resume", self.agent, self.cwd, prefix, False), first)
        continued = self.api.call("continue-recent", self.agent, self.cwd, None, [])
        self.assertEqual(continued.source, "most-recent")
        self.assertEqual(continued.path,
                         json.loads(self.api.call_json("continue-recent", self.agent, self.cwd, None, []))["path"])

    def test_tree_nodes_are_the_json_tree_flat(self):
        s = self.api.call("[static]session.create", self.agent, "/work/pi", None, None)
        q = self.m("append-message", s, user("q"))
        self.m("append-message", s, reply("a"))
        self.m("append-label", s, q, "start")
        self.m("branch", s, q)
        self.m("append-message", s, reply("b"))
        flat = []

        def walk(nodes, depth):
            for n in nodes:
                flat.append((n["entry"]["id"], n["entry"].get("parentId"), n["entry"]["type"],
                             n["entry"]["timestamp"], n.get("label"), depth, len(n["children"])))
                walk(n["children"], depth + 1)
        walk(json.loads(self.m("tree", s)), 0)
        nodes = self.m("tree-nodes", s)
        self.assertEqual([(n.id, field(n, "parent_id"), field(n, "entry_type"), n.timestamp, n.label,
                           n.depth, field(n, "child_count")) for n in nodes], flat)
        self.assertEqual(nodes[0].label, "start")
        self.assertEqual([n.index for n in nodes], [0, 1, 2, 3])


if __name__ == "__main__":
    unittest.main()


class ContextThroughTheIndex(unittest.TestCase):
    """`context` of a session file reads it through its index: the first open scans it by
    ranged reads and keeps the index in `<agent>/cache/index/`; a reopen reads the index
    and, by `read-range`, only the lines of the context."""

    def setUp(self):
        import host
        self.host = host
        self.calls = []
        self.saved = dict(host.STORAGE)
        for name in ("read", "open-reader", "read-prefix", "read-range"):
            def counting(store, path, *rest, _name=name, _f=host.STORAGE[name]):
                r = _f(store, path, *rest)
                self.calls.append((_name, path, len(r) if isinstance(r, bytes) else 0))
                return r
            host.STORAGE[name] = counting
        self.api = SessionApi(COMPONENT)
        self.tmp = tempfile.TemporaryDirectory(prefix="xcsh-wasmtime-py-index-")
        self.agent = os.path.join(os.path.realpath(self.tmp.name), "agent")

    def tearDown(self):
        self.host.STORAGE.clear()
        self.host.STORAGE.update(self.saved)
        self.tmp.cleanup()

    def test_a_reopen_reads_only_the_lines_of_its_context(self):
        s = self.api.call("[static]session.create", self.agent, "/work/pi", None, None)
        ids = []
        for i in range(200):
            ids.append(self.api.call("[method]session.append-message", s, user(f"{i} " + "question " * 60)))
            self.api.call("[method]session.append-message", s, reply(f"answer {i}"))
        path = self.api.call("[method]session.file", s)
        self.api.call("[method]session.close", s)
        size = os.path.getsize(path)
        leaf = ids[50]
        expected = native(path, leaf)
        self.calls.clear()
        self.assertEqual(self.api.call("context", path, self.agent, leaf), expected)
        self.assertEqual([c for c in self.calls if c[1] == path and c[0] != "read-range"], [],
                         "the session file is read by ranges only")
        cached = os.listdir(os.path.join(self.agent, "cache", "index"))
        self.assertEqual(len(cached), 1)
        self.calls.clear()
        self.assertEqual(self.api.call("context", path, self.agent, leaf), expected)
        read = sum(n for (_, p, n) in self.calls if p == path)
        self.assertLess(read, size // 3, f"a reopen read {read} of the file's {size} bytes")
        self.assertTrue(any(p.endswith(cached[0]) for (_, p, _) in self.calls), "the index was read")
