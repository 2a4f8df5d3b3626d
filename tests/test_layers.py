"""The package's shape: layers that import downward only.

``xla_array/core`` (the engine) < ``xla_array/kernels`` (native kernels) < ``xla_array/api``
(Array and the namespace functions) < the public modules (``xla_array``, ``linalg``, ``fft``,
``sharding``, ``debug``). A module may import its own layer and the layers below, never one
above (at the top of the file or inside a function). Within the package, module-level imports
form no cycle, and an import inside a function is there only for a load-order need that a
``# load order: ...`` comment on the line or the line above names.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "xla_array"
LAYERS = ("core", "kernels", "api", "")  # bottom to top; "" is the package root


def _modules() -> dict[str, Path]:
    """Dotted name -> file; a package is named by its folder (``xla_array``, ``xla_array.api``)."""
    out = {}
    for p in PKG.rglob("*.py"):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _layer(mod: str) -> int:
    parts = mod.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS) - 1


def _imports(mod: str, path: Path, known: set[str]):
    """(target module, line, inside a function) for every import of a package module."""
    tree = ast.parse(path.read_text())
    here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]

    def resolve(node: ast.ImportFrom) -> list[str]:
        if node.level:
            base = here[:len(here) - node.level + 1]
            stem = ".".join(base + ([node.module] if node.module else []))
        else:
            stem = node.module or ""
        if not stem.startswith("xla_array"):
            return []
        out = []
        for alias in node.names:
            full = f"{stem}.{alias.name}"
            out.append(full if full in known else stem)
        return [t for t in out if t in known]

    found = []

    def visit(node: ast.AST, in_fn: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            fn = in_fn or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(ch, ast.ImportFrom):
                found.extend((t, ch.lineno, in_fn) for t in resolve(ch))
            elif isinstance(ch, ast.Import):
                found.extend((a.name, ch.lineno, in_fn) for a in ch.names
                             if a.name.startswith("xla_array") and a.name in known)
            visit(ch, fn)

    visit(tree, False)
    return found


def _graph():
    mods = _modules()
    known = set(mods)
    return mods, {m: _imports(m, p, known) for m, p in mods.items()}


def test_no_module_imports_a_layer_above_its_own():
    mods, graph = _graph()
    bad = [f"{m}:{line} imports {t}" for m, edges in graph.items() for t, line, _ in edges
           if _layer(t) > _layer(m)]
    assert not bad, "upward imports:\n" + "\n".join(sorted(bad))


def test_function_level_imports_name_their_load_order_need():
    mods, graph = _graph()
    bad = []
    for m, edges in graph.items():
        lines = mods[m].read_text().splitlines()
        for t, line, in_fn in edges:
            if in_fn and "load order" not in lines[line - 1] + lines[line - 2]:
                bad.append(f"{m}:{line} imports {t} inside a function")
    assert not bad, "function-level imports without a load-order reason:\n" + "\n".join(bad)


def test_module_level_imports_have_no_cycle():
    mods, graph = _graph()
    deps = {m: {t for t, _, in_fn in edges if not in_fn and t != m}
            for m, edges in graph.items()}
    for m in list(deps):  # importing a.b.c runs a and a.b first: drop those implied edges
        deps[m] = {t for t in deps[m] if not m.startswith(t + ".")}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def walk(m: str, path: list[str]) -> bool:
        state[m] = 1
        for t in sorted(deps[m]):
            if state.get(t) == 1:
                cycle.extend(path[path.index(t):] + [m, t] if t in path else [m, t])
                return True
            if t not in state and walk(t, path + [m]):
                return True
        state[m] = 2
        return False

    for m in sorted(deps):
        if m not in state and walk(m, []):
            break
    assert not cycle, "module-level import cycle: " + " -> ".join(cycle)


def test_the_layer_map_sees_every_module():
    mods, graph = _graph()
    assert {"xla_array.core.graph", "xla_array.kernels.rowpass", "xla_array.api.array",
            "xla_array.linalg"} <= set(mods)
    assert _layer("xla_array.core.ops.linalg") == 0
    assert _layer("xla_array.api.array") == 2 and _layer("xla_array.sharding") == 3
    assert _layer("xla_array.api") == 2 and _layer("xla_array") == 3
    assert sum(len(e) for e in graph.values()) > 100  # the parser finds the imports


def test_only_the_runtime_module_imports_jaxlib():
    mods = _modules()
    users = set()
    for m, p in mods.items():
        for node in ast.walk(ast.parse(p.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "jaxlib" or n.startswith("jaxlib.") for n in names):
                users.add(m)
    assert users == {"xla_array.core.backend"}
