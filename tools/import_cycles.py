"""wavelift's import graph and its cycles (strongly connected components), read with `ast`.

Every import statement counts, wherever it is: module level, inside functions, under
`if TYPE_CHECKING:`. An import hidden in a function still ties the two modules together (each
needs the other to work, and neither can be read or moved alone), so it is a cycle all the same.
Edges go to the module an import names: `import a.b` and `from a import b` (b a submodule) are
edges to a.b; `from a import name` (name not a module) is an edge to a; a package is its
`__init__`. Relative imports are resolved against the importing module. Imports of other
packages, and dynamic imports (`importlib.import_module`), are not edges.

    python3 tools/import_cycles.py          # prints each cycle; exit status 1 if there is one
"""

from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "wavelift"


def modules(root: pathlib.Path = ROOT, package: str = PACKAGE) -> dict[str, pathlib.Path]:
    """Dotted module name -> source file, for every .py file of the package (a package is named
    by its __init__.py)."""
    out = {}
    for p in sorted((root / package).rglob("*.py")):
        parts = list(p.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _resolve(importer: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of `from <level dots><name> import ...` written in `importer`."""
    if level == 0:
        return name or ""
    base = importer.split(".")
    if not is_package:
        base.pop()  # a module's relative imports start at its package
    if level > 1:
        base = base[: -(level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The package modules that module `name` (source `path`) imports anywhere."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, is_package, node.level, node.module)
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in known:
                    out.add(sub)
                elif target in known:
                    out.add(target)
    out.discard(name)
    return out


def import_graph(root: pathlib.Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    mods = modules(root, package)
    known = set(mods)
    return {m: imports_of(m, p, known) for m, p in mods.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative), each
    sorted, the list sorted by its first name."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1:
                    out.append(sorted(scc))
    return sorted(out)


def loop_in(graph: dict[str, set[str]], scc: list[str]) -> list[str]:
    """One closed path through a component (its first module ... back to it), for the report."""
    members = set(scc)
    start = scc[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:  # breadth first: the shortest way back to start
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [*reversed(path), start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return scc


def main() -> int:
    graph = import_graph()
    found = cycles(graph)
    for scc in found:
        print(f"cycle of {len(scc)} modules: {', '.join(scc)}")
        print(f"  e.g. {' -> '.join(loop_in(graph, scc))}")
    if not found:
        print(f"no import cycles among {len(graph)} modules")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
