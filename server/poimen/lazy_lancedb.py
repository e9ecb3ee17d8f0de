"""`import lancedb` without building the REST namespace client it never uses here.

`lancedb` imports `lance_namespace`, whose generated OpenAPI client
(`lance_namespace_urllib3_client`) builds ~160 pydantic models and ~500 validated API
methods in its package `__init__`s: 2.3 s of a 3 s import on this machine
(`python -X importtime -c 'import lancedb'`). A local or object-store vault never
talks to a REST namespace, so those three package `__init__`s are replaced by lazy
ones: each name they would import is imported on first access instead (PEP 562).
An `__init__` holding anything but a docstring, constants and `from X import Y`
lines is executed as usual, so a changed client costs time, never correctness.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import sys

LAZY_PACKAGES = ("lance_namespace_urllib3_client", "lance_namespace_urllib3_client.api",
                 "lance_namespace_urllib3_client.models")


def _plan(source: str) -> tuple[dict, dict] | None:
    """(name -> (module, attribute), constants) of an import-only `__init__`, or None."""
    names, constants = {}, {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and all(a.name != "*" for a in node.names):
            names.update({a.asname or a.name: (node.module, a.name) for a in node.names})
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and all(isinstance(t, ast.Name) for t in node.targets):
            constants.update({t.id: node.value.value for t in node.targets})
        else:
            return None
    return names, constants


class _LazyInit(importlib.abc.Loader):
    def __init__(self, real: importlib.abc.Loader):
        self.real = real

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        plan = _plan(self.real.get_source(module.__name__) or "")
        if plan is None:
            self.real.exec_module(module)
            return
        names, constants = plan
        module.__dict__.update(constants)
        module.__all__ = list(names)

        def __getattr__(name: str):
            if name not in names:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            source, attribute = names[name]
            value = getattr(importlib.import_module(source), attribute)
            setattr(module, name, value)
            return value

        module.__getattr__ = __getattr__


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in LAZY_PACKAGES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and hasattr(spec.loader, "get_source"):
            spec.loader = _LazyInit(spec.loader)
        return spec


def load():
    """The `lancedb` module, imported with the namespace client deferred."""
    if "lancedb" not in sys.modules and not any(isinstance(f, _Finder)
                                                for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    import lancedb

    return lancedb
