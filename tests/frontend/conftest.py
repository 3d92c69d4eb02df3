"""Tests here run programs through tests/execute's rig (harness.Rig, asm.assemble)."""

from testpaths import execute_rig

pytest_collection_modifyitems = execute_rig(__file__)
