"""wavelift/settings.py: the one module that reads the environment, its docs table, old names."""

import ast
import os
import random
import subprocess
import sys
import types
import warnings

import pytest
from testpaths import ROOT

from wavelift import settings

ENV_READS = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def test_docs_table_is_current():
    assert (ROOT / "docs" / "settings.md").read_text() == settings.markdown()
    r = subprocess.run(
        [sys.executable, "-m", "wavelift.settings", "--markdown"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout == settings.markdown()


def test_only_settings_reads_the_environment():
    """No module of wavelift but settings.py touches os.environ / os.getenv (AST, so an import
    inside a function or an alias of os is caught as well)."""
    found = []
    for path in sorted((ROOT / "wavelift").rglob("*.py")):
        if path == ROOT / "wavelift" / "settings.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        os_names = {"os"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                os_names |= {a.asname for a in node.names if a.name == "os" and a.asname}
        rel = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "os":
                found += [f"{rel}:{node.lineno}" for a in node.names if a.name in ENV_READS]
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in ENV_READS
                and isinstance(node.value, ast.Name)
                and node.value.id in os_names
            ):
                found.append(f"{rel}:{node.lineno}")
    assert not found, f"read the environment through wavelift/settings.py: {found}"


def test_every_setting_has_one_prefix_a_type_and_a_doc():
    for s in settings.SETTINGS.values():
        assert s.name.startswith(settings.PREFIX) or s.group == "external", s.name
        assert s.type in (int, float, str) and s.doc and "\n" not in s.doc, s.name
        assert s.default is None or isinstance(s.default, s.type), s.name
        assert s.alias is None or s.alias.startswith("WL_"), s.name


def test_values_defaults_and_bad_values(monkeypatch):
    monkeypatch.delenv("WAVELIFT_BATCH_WAVES", raising=False)
    monkeypatch.delenv("WL_BATCH_WAVES", raising=False)
    assert settings.get("WAVELIFT_BATCH_WAVES") == 1024
    monkeypatch.setenv("WAVELIFT_BATCH_WAVES", "")
    assert settings.get("WAVELIFT_BATCH_WAVES") == 1024  # empty: the default
    monkeypatch.setenv("WAVELIFT_BATCH_WAVES", " 64 ")
    assert settings.get("WAVELIFT_BATCH_WAVES") == 64
    monkeypatch.setenv("WAVELIFT_BATCH_WAVES", "many")
    with pytest.raises(ValueError, match="WAVELIFT_BATCH_WAVES='many' is not an integer"):
        settings.get("WAVELIFT_BATCH_WAVES")
    with pytest.raises(KeyError):
        settings.get("WAVELIFT_NO_SUCH_SETTING")


def test_old_names_still_work_with_a_deprecation_warning(monkeypatch):
    monkeypatch.delenv("WAVELIFT_NATIVE_OPT", raising=False)
    monkeypatch.setenv("WL_NATIVE_OPT", "-O1")
    monkeypatch.setattr(settings, "_warned", set())
    with pytest.warns(DeprecationWarning, match="WL_NATIVE_OPT is deprecated: set WAVELIFT_NATIVE_OPT"):
        assert settings.get("WAVELIFT_NATIVE_OPT") == "-O1"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        assert settings.get("WAVELIFT_NATIVE_OPT") == "-O1"
    monkeypatch.setenv("WAVELIFT_NATIVE_OPT", "-O2")  # the new name wins
    assert settings.get("WAVELIFT_NATIVE_OPT") == "-O2"


def _raw_by_get(name):
    """raw() as os.environ.get gives it (the reference for its unset fast path)."""
    s = settings.SETTINGS[name]
    value = os.environ.get(name)
    if value is None and s.alias is not None:
        value = os.environ.get(s.alias)
    return value


def test_an_unset_name_read_fast_sees_every_change(monkeypatch):
    """raw() and get() answer "unset" from os.environ's own dict (settings._unset): after each
    of a random run of writes -- os.environ's item assignment, setdefault, deletion, update and
    pop, empty values, old names --, for every setting, raw() equals os.environ.get's answer and
    get() the value that answer gives; with os.environ replaced by another mapping, that
    mapping is read."""
    rng = random.Random(24)
    names = [n for s in settings.SETTINGS.values() for n in (s.name, s.alias) if n is not None]
    saved = {n: os.environ.get(n) for n in names}
    assert settings._DATA is not None  # (POSIX CPython: the fast path is what this checks)
    fast = 0
    try:
        for n in names:
            os.environ.pop(n, None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for step in range(400):
                n = rng.choice(names)
                how = rng.randrange(5)
                value = rng.choice(["", " ", "1", "7", "off"])
                if how == 0:
                    os.environ[n] = value
                elif how == 1:
                    os.environ.pop(n, None)
                elif how == 2:
                    os.environ.update({n: value})
                elif how == 3:
                    os.environ.setdefault(n, value)
                elif n in os.environ:
                    del os.environ[n]
                for s in settings.SETTINGS.values():
                    want = _raw_by_get(s.name)
                    fast += settings._unset(s.name)
                    assert settings._unset(s.name) == (want is None), (step, s.name)
                    assert settings.raw(s.name) == want, (step, s.name)
                    if want is None or not want.strip():
                        assert settings.get(s.name) == s.default, (step, s.name)
                    elif s.type is str:
                        assert settings.get(s.name) == want, (step, s.name)
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v
    assert fast > 0
    monkeypatch.setattr(os, "environ", {"WAVELIFT_BATCH_WAVES": "64"})
    assert not settings._unset("WAVELIFT_BATCH_WAVES") and not settings._unset("WAVELIFT_TIME_LIMIT")
    assert settings.get("WAVELIFT_BATCH_WAVES") == 64
    assert settings.raw("WAVELIFT_TIME_LIMIT") is None


def test_a_read_again_sees_every_write(monkeypatch):
    """get() keeps its last answer of a name while os.environ's dict holds the very objects it
    read (settings._GOT): another value, the same text written again, a deletion, an empty
    value, the old name and a bad value are each seen at the next read; a value read through
    the old name, or a bad one, is never kept."""
    n, old = "WAVELIFT_BATCH_WAVES", "WL_BATCH_WAVES"
    monkeypatch.delenv(old, raising=False)
    monkeypatch.setenv(n, "64")
    assert settings.get(n) == 64
    kept = settings._GOT[n]
    assert kept[-1] == 64 and settings.get(n) == 64 and settings._GOT[n] is kept  # (read from it)
    monkeypatch.setenv(n, "32")
    assert settings.get(n) == 32 and settings._GOT[n] is not kept
    kept = settings._GOT[n]
    os.environ[n] = "32"  # (the same text in a new object: an equal value, the answer kept)
    assert os.environ._data[os.fsencode(n)] is not kept[2]
    assert settings.get(n) == 32 and settings._GOT[n] is kept
    os.environ.update({n: "16"})
    assert settings.get(n) == 16
    monkeypatch.setenv(n, "")
    assert settings.get(n) == 1024
    monkeypatch.delenv(n)
    assert settings.get(n) == 1024
    monkeypatch.setattr(settings, "_warned", set())
    monkeypatch.setenv(old, "8")
    with pytest.warns(DeprecationWarning):
        assert settings.get(n) == 8
    assert settings.get(n) == 8 and settings._GOT.get(n, (None,) * 6)[-1] != 8  # (never kept)
    monkeypatch.setenv(n, "4")  # (the new name wins)
    assert settings.get(n) == 4
    monkeypatch.delenv(old)
    assert settings.get(n) == 4
    monkeypatch.setenv(n, "many")
    for _ in range(2):
        with pytest.raises(ValueError, match="is not an integer"):
            settings.get(n)
    monkeypatch.setenv(n, "2")
    assert settings.get(n) == 2
    monkeypatch.setattr(os, "environ", {n: "1"})  # (another mapping: read, not kept)
    assert settings.get(n) == 1


def test_raw_keeps_its_answer_only_while_the_environment_holds_it(monkeypatch):
    """raw() keeps its last text of a name as get() does (settings._RAW, the same test): each
    write is seen at the next read, a text read through the old name is never kept; and
    execute's time limit, read through it every dispatch, sees each write."""
    from wavelift.run.execute import time_limit_from_env

    n, old = "WAVELIFT_BATCH_WAVES", "WL_BATCH_WAVES"
    monkeypatch.delenv(old, raising=False)
    monkeypatch.setenv(n, "64")
    assert settings.raw(n) == "64"
    kept = settings._RAW[n]
    assert settings.raw(n) == "64" and settings._RAW[n] is kept  # (read from it)
    monkeypatch.setenv(n, "32")
    assert settings.raw(n) == "32" and settings._RAW[n] is not kept
    kept = settings._RAW[n]
    os.environ[n] = "32"  # (the same text in a new object: an equal value, the answer kept)
    assert settings.raw(n) == "32" and settings._RAW[n] is kept
    monkeypatch.delenv(n)
    assert settings.raw(n) is None
    monkeypatch.setattr(settings, "_warned", set())
    monkeypatch.setenv(old, "8")
    with pytest.warns(DeprecationWarning):
        assert settings.raw(n) == "8"
    assert settings._RAW.get(n, (None,) * 6)[-1] != "8"  # (never kept)
    monkeypatch.setenv(n, "4")  # (the new name wins)
    assert settings.raw(n) == "4"
    monkeypatch.setattr(os, "environ", {n: "1"})  # (another mapping: read, not kept)
    assert settings.raw(n) == "1"
    monkeypatch.undo()
    t = "WAVELIFT_TIME_LIMIT"
    monkeypatch.delenv(t, raising=False)
    assert time_limit_from_env() is None
    for text, want in (("2.5", 2.5), ("0", None), ("7", 7.0), ("", None), ("7", 7.0)):
        monkeypatch.setenv(t, text)
        assert time_limit_from_env() == want and time_limit_from_env() == want
    monkeypatch.setenv(t, "-1")
    with pytest.raises(ValueError, match="number of seconds"):
        time_limit_from_env()
    monkeypatch.delenv(t)
    assert time_limit_from_env() is None


def _caching_getitem(monkeypatch):
    """os._Environ reading as another Python's might: each name's first value, kept."""
    seen: dict = {}

    def getitem(self, key):
        k = (id(self._data), key)
        if k not in seen:
            seen[k] = self.decodevalue(self._data[self.encodekey(key)])
        return seen[k]

    monkeypatch.setattr(os._Environ, "__getitem__", getitem)


def test_os_environs_dict_is_read_directly_only_where_it_is_all_that_is_read(monkeypatch):
    """settings._direct: os.environ's own dict on this (POSIX CPython) Python -- the fast path
    is on --, and None wherever reading os.environ might be anything but reading that dict as
    it is now: not os._Environ itself, a method replaced on the instance, values that can
    change in place, a dict that is not a dict, reads that keep what they read."""
    env = os.environ
    assert settings._direct(env) is env._data and settings._DATA is env._data

    def like(**kw):
        parts = dict(data=dict(env._data), encodekey=env.encodekey, decodekey=env.decodekey)
        parts |= dict(encodevalue=env.encodevalue, decodevalue=env.decodevalue) | kw
        return os._Environ(
            parts["data"], parts["encodekey"], parts["decodekey"], parts["encodevalue"], parts["decodevalue"]
        )

    assert settings._direct(like()) is not None  # (the same internals: the control)
    assert settings._direct({}) is None and settings._direct(dict(env)) is None
    assert (
        settings._direct(
            type("Sub", (os._Environ,), {})(
                dict(env._data),
                *[getattr(env, a) for a in ("encodekey", "decodekey", "encodevalue", "decodevalue")],
            )
        )
        is None
    )
    odd = like()
    odd.get = lambda *a: None
    assert settings._direct(odd) is None
    assert settings._direct(like(encodevalue=lambda v: bytearray(v.encode()))) is None
    assert settings._direct(like(data=types.MappingProxyType({}))) is None
    assert settings._direct(like(encodekey=None)) is None  # (raises inside: refused, not raised)
    _caching_getitem(monkeypatch)
    assert settings._direct(like()) is None and settings._direct(env) is None


def test_without_the_direct_read_every_read_takes_os_environ(monkeypatch):
    """Where _direct found no dict to read (another Python), get() and raw() read os.environ
    every time and keep nothing: each write, deletion and replacement is seen at once."""
    monkeypatch.setattr(settings, "_DATA", None)
    monkeypatch.setattr(settings, "_GOT", {})
    monkeypatch.setattr(settings, "_RAW", {})
    n, old = "WAVELIFT_BATCH_WAVES", "WL_BATCH_WAVES"
    monkeypatch.delenv(old, raising=False)
    monkeypatch.delenv(n, raising=False)
    assert settings.get(n) == 1024 and settings.raw(n) is None and not settings._unset(n)
    for text, want in (("64", 64), ("32", 32), ("32", 32), ("", 1024), (" 8 ", 8)):
        os.environ[n] = text
        assert settings.get(n) == want and settings.raw(n) == text
    del os.environ[n]
    assert settings.get(n) == 1024 and settings.raw(n) is None
    monkeypatch.setattr(os, "environ", {n: "2"})
    assert settings.get(n) == 2 and settings.raw(n) == "2"
    assert settings._GOT == {} and settings._RAW == {}


def test_os_environs_dict_replaced_is_seen_at_once(monkeypatch):
    """os.environ's dict replaced by another (its writes go there from then on): the kept answers
    are not read (they name the old dict), nor the direct "unset"; each read takes os.environ."""
    n = "WAVELIFT_BATCH_WAVES"
    monkeypatch.setenv(n, "64")
    assert settings.get(n) == 64 and settings.raw(n) == "64"
    data = dict(os.environ._data)
    data[os.fsencode(n)] = b"16"
    monkeypatch.setattr(os.environ, "_data", data)
    assert settings.get(n) == 16 and settings.raw(n) == "16" and not settings._unset("WAVELIFT_TIME_LIMIT")
    os.environ[n] = "8"
    assert settings.get(n) == 8 and settings.raw(n) == "8"
    del os.environ[n]
    assert settings.get(n) == 1024 and settings.raw(n) is None
