"""Independent oracles for wavelift's execution tests: `pocl` runs the fixture OpenCL sources on
PoCL; `cases` holds the fixture-kernel cases (arguments, launch shapes, NumPy references,
comparison rules). Used by tests/test_fixture_kernels.py and bench/bench_exec.py."""
