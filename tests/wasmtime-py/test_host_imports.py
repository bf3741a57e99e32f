"""This host defines exactly the functions the component imports: every one it calls,
and none besides (a function defined here that the component never calls is dead code in
every host, as 0.1.0's `blob-put`, `blob-get` and `copy-dir` were). The component's
imports are read from its own type, which lists only what its code calls.
"""
import os
import unittest

from wasmtime import Engine
from wasmtime.component import Component, FuncType

from host import HISTORY, STORAGE

STORAGE_IMPORT = "xcsh:session/storage@0.2.0"
HISTORY_IMPORT = "xcsh:session/history@0.2.0"


class Imports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        engine = Engine()
        component = Component.from_file(engine, os.environ["XCSH_COMPONENT"])
        imports = component.type.imports(engine)
        cls.funcs = {
            name: sorted(k for k, v in imports[name].ty.exports(engine).items()
                         if isinstance(v.ty, FuncType))
            for name in (STORAGE_IMPORT, HISTORY_IMPORT)
        }

    def test_storage_defines_what_the_component_imports(self):
        # The `reader` resource's method is defined beside STORAGE (see `link`).
        self.assertEqual(sorted([*STORAGE, "[method]reader.read"]), self.funcs[STORAGE_IMPORT])

    def test_history_defines_what_the_component_imports(self):
        self.assertEqual(sorted(HISTORY), self.funcs[HISTORY_IMPORT])


if __name__ == "__main__":
    unittest.main()
