"""Running dispatches: `execute` carries out one (trace, translate, build, run, land or refuse),
`replay` walks a capture's streams and executes every dispatch, `result` is what each dispatch
gives back, `report` writes and checks the JSON report of a run."""
