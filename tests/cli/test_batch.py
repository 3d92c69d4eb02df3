"""`wavelift batch` (issue 26 item 8): manifests, JSONL results, jobs, shards, baselines, captures
as untrusted input, and Dask (a real distributed.LocalCluster; skipped without Dask)."""

import hashlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest
from clipaths import VADD_HSACO, command_runner, record_only

from wavelift.batch import manifest as mf
from wavelift.batch.executors import RETRIES, run_local
from wavelift.batch.worker import run_capture

KINDS = ["vadd", "two", "escape", "images"]  # captures of conftest's `built`


def corrupt(src, dst):
    """A copy of capture `src` with one payload byte changed (its extent CRC no longer holds)."""
    data = bytearray(pathlib.Path(src).read_bytes())
    data[100] ^= 0xFF
    pathlib.Path(dst).write_bytes(bytes(data))


@pytest.fixture(scope="module")
def capdir(built, tmp_path_factory):
    d = tmp_path_factory.mktemp("batch") / "caps"
    d.mkdir()
    for k in KINDS:
        shutil.copyfile(built[k], d / f"{k}.wlcap")
    corrupt(built["vadd"], d / "damaged.wlcap")
    return d


@pytest.fixture(scope="module")
def manifest(capdir, wavelift_cmd_module):
    m = capdir.parent / "m.json"
    p = wavelift_cmd_module("batch", "--make-manifest", capdir, "--out", m)
    assert p.returncode == 0, p.stderr
    return m


@pytest.fixture(scope="module")
def wavelift_cmd_module():
    return command_runner(240)


@pytest.fixture(scope="module")
def full(manifest, wavelift_cmd_module):
    """`--jobs 1` over the manifest: (stdout, its lines)."""
    p = wavelift_cmd_module("batch", manifest, "--jobs", 1)
    assert p.returncode == 0, p.stderr
    return p.stdout, lines_of(p.stdout)


def lines_of(text):
    return [json.loads(x) for x in text.splitlines()]


def stable(lines):
    """The lines without their timings (the one field that differs from run to run)."""
    return [{k: v for k, v in x.items() if k != "timing"} for x in lines]


def run_batch(cmd, *argv):
    p = cmd("batch", *argv)
    return p, lines_of(p.stdout)


# --- manifests ---------------------------------------------------------------------------------
def test_make_manifest(manifest, built):
    doc = json.loads(manifest.read_text())
    assert doc["format"] == "wavelift-batch" and doc["version"] == 1
    byname = {c["path"]: c for c in doc["captures"]}
    assert list(byname) == [f"caps/{k}.wlcap" for k in sorted(KINDS + ["damaged"])]
    for k in KINDS:
        assert (
            byname[f"caps/{k}.wlcap"]["sha256"]
            == hashlib.sha256(pathlib.Path(built[k]).read_bytes()).hexdigest()
        )
    # the digest, as documented: address, size and bytes of each write span, after the dispatch
    import wavelift

    cap = wavelift.Capture.load(built["vadd"])
    c = next(a for a in cap.memory.allocations if a.name == "c")
    n = built["vadd_n"] * 4
    h = hashlib.sha256(c.base.to_bytes(8, "little") + n.to_bytes(8, "little") + built["vadd_c"].tobytes())
    assert byname["caps/vadd.wlcap"]["dispatches"] == [{"result": "landed", "digest": h.hexdigest()}]
    assert byname["caps/two.wlcap"]["dispatches"][1] == {
        "result": "refused",
        "code": "dispatch.unsupported_mode",
    }
    assert byname["caps/escape.wlcap"]["dispatches"] == [{"result": "refused", "code": "escape"}]
    assert byname["caps/images.wlcap"]["dispatches"] == []
    assert byname["caps/damaged.wlcap"]["refused"] == "capture.corrupt"


def test_manifest_errors_are_one_line(cli, tmp_path, capdir):
    bad = tmp_path / "bad.json"
    HEAD = '{"format": "wavelift-batch", "version": 1, "captures": '
    for text, says in [
        ("{", "not a JSON manifest"),
        ('{"format": "x", "version": 1, "captures": []}', "not a batch manifest"),
        (
            HEAD + '[{"path": "a", "dispatches": [{"result": "landed", "code": "x"}]}]}',
            'captures[0].dispatches[0]: a landed dispatch has no "code"',
        ),
        (HEAD + '[{"path": "a"}, {"path": "a"}]}', "each capture once"),
    ]:
        bad.write_text(text)
        rc, _, err = cli("batch", bad)
        assert rc == 2 and says in err and err.count("\n") == 1, err
    rc, _, err = cli("batch", tmp_path / "none.json")
    assert rc == 2 and "no such file" in err
    rc, _, err = cli("batch", "--shard", "3/2", tmp_path / "none.json")
    assert rc == 2
    rc, _, err = cli("batch")
    assert rc == 2 and "--make-manifest" in err


# --- running -----------------------------------------------------------------------------------
def test_jobs_1_and_2_give_the_same_lines(wavelift_cmd_module, manifest, full, tmp_path):
    _, one = full
    out = tmp_path / "r.jsonl"
    p2 = wavelift_cmd_module("batch", manifest, "--jobs", 2, "--out", out)
    assert p2.returncode == 0, p2.stdout + p2.stderr
    two = lines_of(out.read_text())
    assert stable(one) == stable(two)
    assert all("timing" in x for x in one)
    # one line per dispatch (and one for the capture that did not load or has none)
    assert [(x["capture"], x["dispatch"], x["result"], x["code"], x["check"]) for x in one] == [
        ("caps/damaged.wlcap", None, "refused", "capture.corrupt", "match"),
        ("caps/escape.wlcap", 0, "refused", "escape", "match"),
        ("caps/images.wlcap", None, "empty", None, "match"),
        ("caps/two.wlcap", 0, "landed", None, "match"),
        ("caps/two.wlcap", 1, "refused", "dispatch.unsupported_mode", "match"),
        ("caps/vadd.wlcap", 0, "landed", None, "match"),
    ]
    assert "6 match, 0 mismatch" in p2.stdout and f"results: {out}" in p2.stdout
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_shards_cover_every_entry_once(wavelift_cmd_module, manifest, full):
    _, full = full
    got = []
    for i in (1, 2, 3):
        p, part = run_batch(wavelift_cmd_module, manifest, "--shard", f"{i}/3")
        assert p.returncode == 0, p.stderr
        got.append(part)
    caps = [{x["capture"] for x in part} for part in got]
    assert sum(len(c) for c in caps) == len({x["capture"] for x in full}) == 5
    assert sorted(map(json.dumps, stable([x for part in got for x in part]))) == sorted(
        map(json.dumps, stable(full))
    )
    entries = mf.load(str(manifest))
    assert [e.index for e in mf.shard(entries, "2/3")] == [1, 4]


def test_baseline_reports_only_changes(wavelift_cmd_module, manifest, full, capdir, built, tmp_path):
    base = tmp_path / "base.jsonl"
    base.write_text(full[0])
    p, same = run_batch(wavelift_cmd_module, manifest, "--baseline", base)
    assert p.returncode == 0 and same == [] and "0 change(s)" in p.stderr
    # vadd.wlcap now holds the escape capture: one dispatch changes, and it mismatches
    work = tmp_path / "m"
    shutil.copytree(capdir, work / "caps")
    shutil.copyfile(manifest, work / "m.json")
    shutil.copyfile(built["escape"], work / "caps" / "vadd.wlcap")
    p, changed = run_batch(wavelift_cmd_module, work / "m.json", "--baseline", base)
    assert p.returncode == 1
    assert len(changed) == 1
    x = changed[0]
    assert (x["capture"], x["dispatch"], x["change"]) == ("caps/vadd.wlcap", 0, "changed")
    assert (x["result"], x["code"], x["check"]) == ("refused", "escape", "mismatch")
    assert x["before"]["result"] == "landed" and x["before"]["check"] == "match"
    assert "mismatch: caps/vadd.wlcap dispatch 0" in p.stderr


def test_corrupted_capture_is_a_line(wavelift_cmd_module, manifest, capdir, tmp_path, built):
    """A capture damaged after the manifest was made: its line names the refusal, the batch goes
    on, and the exit status says something does not match."""
    shutil.copytree(capdir, tmp_path / "caps")
    m = tmp_path / "m.json"
    shutil.copyfile(manifest, m)
    corrupt(built["two"], tmp_path / "caps" / "two.wlcap")
    with open(tmp_path / "caps" / "escape.wlcap", "r+b") as f:
        f.truncate(10)
    p, lines = run_batch(wavelift_cmd_module, m)
    assert p.returncode == 1, p.stderr
    bykey = {(x["capture"], x["dispatch"]): x for x in lines}
    two = bykey["caps/two.wlcap", None]
    assert (two["result"], two["code"], two["check"]) == ("refused", "capture.corrupt", "mismatch")
    assert "checksum" in two["message"] or "CRC" in two["message"] or "crc" in two["message"]
    assert "the capture file is not the one the manifest names" in two["problems"][0]
    esc = bykey["caps/escape.wlcap", None]
    assert esc["code"] == "capture.corrupt" and "too short" in esc["message"]
    assert bykey["caps/vadd.wlcap", 0]["check"] == "match"


def test_a_crash_in_wavelift_is_a_line(tmp_path, monkeypatch):
    """An exception inside the engine (a bug a capture reaches): an error line naming it, with
    the dispatches before it kept."""
    from wavelift.run import execute

    real = execute.execute_dispatch

    def engine(memory, config, index, *a, **kw):
        if index == 1:
            raise ZeroDivisionError("boom")
        return real(memory, config, index, *a, **kw)

    monkeypatch.setattr(execute, "execute_dispatch", engine)
    import numpy as np

    import wavelift

    dev = wavelift.Device("gfx1030", execute=record_only)
    k = dev.load_code_object(VADD_HSACO, name="basic.hsaco").kernel("vadd")
    a = dev.upload(np.arange(64, dtype=np.float32), name="a")
    c = dev.alloc(256, name="c")
    for _ in range(3):
        k.launch(groups=(1, 1, 1), block=(64, 1, 1), args=[a, a, c, np.uint32(64)])
    path = str(tmp_path / "three.wlcap")
    dev.save_capture(path)
    out = run_capture({"path": path})
    assert [d["result"] for d in out["dispatches"]] == ["landed"]
    assert out["error"]["dispatch"] == 1 and out["error"]["code"] == "batch.internal_error"
    assert "ZeroDivisionError: boom" in out["error"]["message"]
    entry = mf.Entry(0, "three.wlcap", path, None, None, None)
    lines = mf.result_lines(entry, out)
    assert [(x["dispatch"], x["result"], x["check"]) for x in lines] == [
        (0, "landed", "unchecked"),
        (1, "error", "mismatch"),
    ]


def test_digest_runs_do_not_depend_on_how_writes_were_split():
    """Spans split at window edges, listed in any order, or overlapping hash as their union."""
    import numpy as np

    import wavelift
    from wavelift.batch.worker import runs, span_digest

    cap = wavelift.Capture(target="gfx1030")
    base = cap.alloc(64, data=np.arange(64, dtype=np.uint8), name="out")
    assert runs([(10, 5), (0, 4), (4, 2), (20, 0), (12, 1), (15, 3)]) == [(0, 6), (10, 8)]
    one = span_digest(cap.memory, [(base, 32)])
    assert span_digest(cap.memory, [(base + 16, 16), (base, 8), (base + 4, 12)]) == one
    assert span_digest(cap.memory, [(base, 31)]) != one


def test_result_lines_compare_with_the_manifest():
    """Each way a replay can differ from its entry is a mismatch line that says how."""

    def d(i, result, code=None, digest=None):
        return {
            "dispatch": i,
            "result": result,
            "code": code,
            "message": None,
            "digest": digest,
            "bytes_written": 0,
            "time_s": 0.0,
        }

    def out(*ds, error=None, sha="a" * 64):
        return {"sha256": sha, "dispatches": list(ds), "error": error, "time_s": 0.0}

    exp = [{"result": "landed", "digest": "1" * 64}, {"result": "refused", "code": "escape"}]
    e = mf.Entry(0, "x.wlcap", "/x.wlcap", "a" * 64, exp, None)

    def judged(o):
        return [
            (x["dispatch"], x["result"], x["check"], " ".join(x["problems"])) for x in mf.result_lines(e, o)
        ]

    assert judged(out(d(0, "landed", digest="1" * 64), d(1, "refused", "escape"))) == [
        (0, "landed", "match", ""),
        (1, "refused", "match", ""),
    ]
    got = judged(
        out(
            d(0, "landed", digest="2" * 64),
            d(1, "refused", "scratch.too_large"),
            d(2, "landed", digest="1" * 64),
        )
    )
    assert [g[2] for g in got] == ["mismatch"] * 3
    assert "digest 2222222222222222..." in got[0][3] and "expects 1111111111111111..." in got[0][3]
    assert "refused scratch.too_large; the manifest expects escape" in got[1][3]
    assert "this is one more" in got[2][3]
    assert judged(out(d(0, "refused", "escape"))) == [
        (0, "refused", "mismatch", "refused escape; the manifest expects landed"),
        (1, "missing", "mismatch", "the manifest expects dispatch 1; the replay had 1"),
    ]
    assert (
        "not the one the manifest names"
        in judged(out(d(0, "landed", digest="1" * 64), d(1, "refused", "escape"), sha="b" * 64))[0][3]
    )
    e.dispatches, e.refused = None, "capture.corrupt"
    assert judged(
        out(error={"dispatch": None, "result": "refused", "code": "capture.corrupt", "message": "m"})
    ) == [(None, "refused", "match", "")]
    loaded = "the manifest expects the capture refused capture.corrupt; it loaded"
    assert judged(out()) == [(None, "empty", "mismatch", loaded)]
    e.refused = e.sha256 = None
    assert judged(out(d(0, "landed", digest="1" * 64))) == [(0, "landed", "unchecked", "")]


def dies_on(task):
    """A worker function whose process dies on the task marked "die" (as a segfault would)."""
    if task.get("die"):
        os._exit(9)
    return run_capture(task)


def test_a_dead_local_worker_is_a_line(built):
    """A worker process that dies: its task is tried RETRIES times, then answered
    batch.worker_crashed; every other task is answered."""
    tasks = [{"path": str(built[k])} for k in ("vadd", "escape")]
    tasks.insert(1, {"path": str(built["vadd"]), "die": True})
    done = []
    answers = run_local(dies_on, tasks, jobs=2, done=done.append)
    assert sorted(done) == [0, 1, 2]
    assert answers[0]["dispatches"][0]["result"] == "landed"
    assert answers[2]["dispatches"][0]["code"] == "escape"
    err = answers[1]["error"]
    assert err["code"] == "batch.worker_crashed" and f"each of {RETRIES} tries" in err["message"]


# --- Dask --------------------------------------------------------------------------------------
N_MANY = 200


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    c = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    client = distributed.Client(c)
    yield c, client
    client.close()
    c.close()


@pytest.fixture(scope="module")
def many(manifest, tmp_path_factory, wavelift_cmd_module):
    """N_MANY captures (copies of the small ones, in a mixed order) with their manifest, and the
    JSONL of `--jobs 1` over them."""
    d = tmp_path_factory.mktemp("many")
    (d / "caps").mkdir()
    small = json.loads(manifest.read_text())["captures"]
    entries = []
    for i in range(N_MANY):
        e = dict(small[i % len(small)])
        name = f"caps/{i:03d}-{os.path.basename(e['path'])}"
        shutil.copyfile(manifest.parent / e["path"], d / name)
        e["path"] = name
        entries.append(e)
    m = d / "m.json"
    m.write_text(mf.dumps(entries))
    p, ref = run_batch(wavelift_cmd_module, m, "--jobs", 1)
    assert p.returncode == 0, p.stderr
    assert len({x["capture"] for x in ref}) == N_MANY
    return m, ref


def test_dask_local_cluster_gives_the_jsonl_of_jobs_1(cluster, many, wavelift_cmd_module, tmp_path):
    c, _ = cluster
    m, ref = many
    out = tmp_path / "dask.jsonl"
    p = wavelift_cmd_module("batch", m, "--scheduler", c.scheduler_address, "-o", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "(dask, tcp://" in p.stdout
    assert stable(lines_of(out.read_text())) == stable(ref)


def test_dask_killed_worker_loses_nothing(cluster, many, wavelift_cmd_module, tmp_path):
    """A worker killed (SIGKILL) while the batch runs: the scheduler runs its tasks again; the
    JSONL is whole and the same as --jobs 1's; no file exists at --out until it is complete."""
    c, client = cluster
    m, ref = many
    out = tmp_path / "dask.jsonl"
    exe = shutil.which("wavelift")
    proc = subprocess.Popen(
        ([exe] if exe else [sys.executable, "-m", "wavelift"])
        + ["batch", str(m), "--scheduler", c.scheduler_address, "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        victim = None
        t_end = time.monotonic() + 120
        while victim is None and time.monotonic() < t_end and proc.poll() is None:
            busy = [
                w for w, keys in client.processing().items() if any("run_capture" in str(k) for k in keys)
            ]
            if busy:
                victim = busy[0]
            else:
                time.sleep(0.02)
        assert victim is not None, "the batch ended before a worker could be killed"
        assert not out.exists()  # (written once, at the end)
        pid = client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout + stderr
    assert stable(lines_of(out.read_text())) == stable(ref)
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    client.wait_for_workers(2, timeout=60)  # the nanny started a new one
    assert pid not in client.run(os.getpid).values()
