"""The IR's definitions: ops.py is the op table (every op's facts on one row)."""
