"""The host's `storage` functions called directly, as the component would call them
(the store first): `read-range` reads at its offset, short at the end of the file, empty
past it, and a missing file is `not-found`. The component calls it once the core reads
sessions by ranges; until then this is its test.
"""
import os
import tempfile
import unittest

from wasmtime.component import Variant

from host import STORAGE

DATA = bytes(i % 251 for i in range(10_000))


def expected(offset, length):
    """What `read-range` returns of DATA (the core's `storage::range_of`)."""
    start = min(offset, len(DATA))
    return DATA[start:min(offset + length, len(DATA))]


class ReadRange(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="xcsh-wasmtime-py-host-")
        self.path = os.path.join(self.tmp.name, "s.jsonl")
        with open(self.path, "wb") as f:
            f.write(DATA)

    def tearDown(self):
        self.tmp.cleanup()

    def read_range(self, path, offset, length):
        return STORAGE["read-range"](None, path, offset, length)

    def test_the_bytes_at_the_offset(self):
        u64_max = 2**64 - 1
        for offset, length in [(0, 10), (0, 0), (1234, 100), (1234, 0), (9990, 10),
                               (9990, 100), (9999, 1), (10_000, 0), (10_000, 5),
                               (20_000, 5), (5000, u64_max), (0, u64_max), (0, 3 << 20)]:
            with self.subTest(offset=offset, length=length):
                self.assertEqual(bytes(self.read_range(self.path, offset, length)),
                                 expected(offset, length))
        self.assertEqual(bytes(self.read_range(self.path, 1234, 3)), bytes([230, 231, 232]))
        self.assertEqual(len(self.read_range(self.path, 9990, 100)), 10)

    def test_a_missing_file_is_not_found(self):
        err = self.read_range(os.path.join(self.tmp.name, "missing.jsonl"), 0, 10)
        self.assertIsInstance(err, Variant)
        self.assertEqual(err.tag, "not-found")


if __name__ == "__main__":
    unittest.main()
