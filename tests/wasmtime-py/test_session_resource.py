"""The component's `session` resource driven from wasmtime-py: create, append, label,
branch, name, context, fork, reopen. Contexts equal the native core's, byte for byte.

Needs XCSH_COMPONENT (the built component) and cargo (`cargo run --example context`).
"""
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
        self.m("append-message", s, reply("hi there"))
        path = self.m("file", s)
        self.assertTrue(os.path.exists(path))
        self.m("append-label", s, first, "start")
        self.assertEqual(self.m("label", s, first), "start")
        self.m("branch", s, first)
        other = self.m("append-message", s, reply("another answer"))
        self.assertEqual(self.m("leaf-id", s), other)
        self.assertTrue(self.m("set-name", s, "The pi session", "user"))
        self.assertEqual(json.loads(self.m("header", s))["title"], "The pi session")

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


if __name__ == "__main__":
    unittest.main()
