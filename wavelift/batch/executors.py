"""Where batch tasks run: the executor plug point.

An executor is `run(fn, tasks, done=None) -> list`: `fn(task)` for every task (fn is
worker.run_capture: module-level, so every executor can name it in another process or on
another machine), the answers in task order. `done(i)` is called as task i finishes (progress).
An executor never raises for one task: a task whose process died is answered with
`crashed(...)`, which the batch reports as a result line. `EXECUTORS` maps `--executor` names
to factories taking (jobs, scheduler); add one there to plug another engine in.

- local (default): `jobs` worker processes of this machine (spawned, so nothing of this process
  is shared), one task at a time each. A worker that dies (a signal, os._exit) is replaced and
  its task tried again, up to RETRIES times, then answered `batch.worker_crashed`.
- dask: a `distributed.Client` on `scheduler` (an address), or on a LocalCluster of `jobs`
  single-threaded worker processes started here. Tasks are idempotent (one capture each, no
  shared state), so the scheduler may run one again when its worker is lost; after
  `distributed.scheduler.allowed-failures` losses it gives up and the task is answered
  `batch.worker_crashed`. Results come back to this client and are written once, at the end.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
from collections.abc import Callable

from ..errors import UserError

RETRIES = 3  # tries of a task whose local worker process died (Dask's default is 3 too)


def crashed(message: str) -> dict:
    """The answer for a task whose worker died running it."""
    return {
        "sha256": None,
        "dispatches": [],
        "recorded_problems": None,
        "time_s": 0.0,
        "error": {"dispatch": None, "result": "error", "code": "batch.worker_crashed", "message": message},
    }


def _serve(conn, fn) -> None:
    """A local worker process: answer tasks from `conn` until it sends None."""
    os.dup2(2, 1)  # stdout may be the JSONL: whatever a replay prints goes to stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch's to handle
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        i, t = task
        conn.send((i, fn(t)))


def run_local(fn: Callable, tasks: list, jobs: int = 1, done=None) -> list:
    ctx = multiprocessing.get_context("spawn")
    answers: list = [None] * len(tasks)
    queue = list(range(len(tasks)))[::-1]  # pop() takes them in order
    tries = [0] * len(tasks)
    workers: dict = {}  # conn -> [process, task index or None]

    def start():
        parent, child = ctx.Pipe()
        p = ctx.Process(target=_serve, args=(child, fn), daemon=True, name="wavelift-batch")
        p.start()
        child.close()
        workers[parent] = [p, None]

    def feed(conn):
        if queue:
            i = queue.pop()
            tries[i] += 1
            workers[conn][1] = i
            conn.send((i, tasks[i]))
        else:
            workers[conn][1] = None

    try:
        for _ in range(min(max(jobs, 1), len(tasks))):
            start()
        for conn in list(workers):
            feed(conn)
        while any(w[1] is not None for w in workers.values()):
            ready = multiprocessing.connection.wait(list(workers) + [w[0].sentinel for w in workers.values()])
            for conn, (p, i) in list(workers.items()):
                if conn in ready:
                    try:
                        j, answer = conn.recv()
                    except (EOFError, OSError):
                        pass  # it died while answering: below
                    else:
                        answers[j] = answer
                        if done:
                            done(j)
                        feed(conn)
                        continue
                elif p.sentinel not in ready:
                    continue
                p.join()
                conn.close()
                del workers[conn]
                if i is None:
                    continue
                if tries[i] < RETRIES:
                    queue.append(i)
                else:
                    answers[i] = crashed(
                        f"the worker process died running this capture "
                        f"(exit status {p.exitcode}) in each of {tries[i]} tries"
                    )
                    if done:
                        done(i)
                start()
                feed(next(reversed(workers)))
    except BaseException:
        for p, _ in workers.values():  # interrupted: nothing more of theirs is wanted
            p.kill()
        raise
    finally:
        for conn in workers:
            try:
                conn.send(None)
            except OSError:
                pass
        for conn, (p, _) in workers.items():
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()
            conn.close()
    return answers


def run_dask(fn: Callable, tasks: list, jobs: int = 1, scheduler: str | None = None, done=None) -> list:
    try:
        import distributed
    except ImportError:
        raise UserError("the dask executor needs Dask: pip install 'wavelift[dask]'") from None
    cluster = None
    try:
        if scheduler:
            try:
                client = distributed.Client(scheduler, timeout="30s")
            except (OSError, TimeoutError) as e:
                raise UserError(
                    f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({e})"
                ) from None
        else:
            cluster = distributed.LocalCluster(
                n_workers=max(jobs, 1), threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = distributed.Client(cluster)
        with client:
            # pure=False: the scheduler must not answer a task from another batch's result
            # under the same key (a capture's file may have changed since)
            futures = client.map(fn, tasks, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            answers: list = [None] * len(tasks)
            for f in distributed.as_completed(futures):
                i = index[f.key]
                try:
                    answers[i] = f.result()
                except distributed.KilledWorker as e:
                    answers[i] = crashed(f"Dask lost the worker running this capture too often ({e})")
                except Exception as e:  # noqa: BLE001 - the task itself never raises
                    answers[i] = crashed(f"the Dask task failed: {type(e).__name__}: {e}")
                f.release()
                if done:
                    done(i)
            return answers
    finally:
        if cluster is not None:
            cluster.close()


EXECUTORS: dict[str, Callable] = {
    "local": lambda jobs, scheduler: lambda fn, tasks, done=None: run_local(fn, tasks, jobs, done),
    "dask": lambda jobs, scheduler: lambda fn, tasks, done=None: run_dask(fn, tasks, jobs, scheduler, done),
}
