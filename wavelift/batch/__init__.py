"""Batches: replay many captures (`wavelift batch MANIFEST`, docs/guide.md "Batches").

- manifest.py: the manifest file (captures and their expected results), its checks, and the
  comparison of a batch's results with it;
- worker.py: `run_capture(task)`, one capture replayed in a worker, untrusted input in, plain
  data out (never raises for anything the capture does);
- executors.py: where the tasks run — local processes (default) or Dask (`--scheduler`).
"""
