"""The package's shape: no import cycles among wavelift's modules (tools/import_cycles.py counts
every import statement, module level and inside functions alike)."""

import importlib.util

from testpaths import ROOT


def _import_cycles():
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "tools" / "import_cycles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_cycle_finder_finds_cycles():
    ic = _import_cycles()
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert ic.cycles(graph) == [["a", "b", "c"]]
    assert ic.loop_in(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_imports_are_read_from_functions_and_relative_names(tmp_path):
    ic = _import_cycles()
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from .. import a\nfrom ..a import f\n")
    graph = ic.import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.a"}
    assert ic.cycles(graph) == [["pkg.a", "pkg.sub.b"]]


def test_no_import_cycles():
    ic = _import_cycles()
    graph = ic.import_graph()
    found = ic.cycles(graph)
    assert not found, "import cycles: " + "; ".join(" -> ".join(ic.loop_in(graph, c)) for c in found)
