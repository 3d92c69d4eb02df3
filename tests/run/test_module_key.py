"""execute.module_key keeps each program's code hash (issue 24 item 2: nothing in the host path
proportional to the program's size once it is translated) and gives the key it always gave."""

import hashlib

from testpaths import FIXTURES

import wavelift
from wavelift.run import execute
from wavelift.run.result import DispatchResult


def _first(path):
    got = []

    def ex(memory, config, index):
        got.append((memory, config))
        return DispatchResult(index, config)

    wavelift.replay(str(path), execute=ex)
    return got[0]


def _sha(program):
    h = hashlib.sha256()
    for ins in program.instructions:
        h.update(ins.offset.to_bytes(4, "little"))
        for w in ins.words:
            h.update(int(w).to_bytes(4, "little"))
    return h.hexdigest()


def test_code_hash_kept_per_program_and_equal_to_the_hash():
    memory, config = _first(FIXTURES / "captures/radv-int64_div-w32.wlcap")
    prog, _ = execute.program_for(memory, config, cache={})
    assert len(prog.instructions) > 5000
    k1 = execute.module_key(prog, config, "wave", "numpy")
    assert k1[0] == _sha(prog)
    assert execute._CODE_HASHES[id(prog)] == (prog, k1[0])
    assert execute.module_key(prog, config, "wave", "numpy") == k1
    # another translation of other bytes: its own hash, not the kept one
    memory2, config2 = _first(FIXTURES / "captures/radv-int64_misc-w32.wlcap")
    prog2, _ = execute.program_for(memory2, config2, cache={})
    assert execute.module_key(prog2, config2, "wave", "numpy")[0] == _sha(prog2) != k1[0]
    # a fresh translation of the same bytes (a new object): the same hash
    prog3, _ = execute.program_for(memory, config, cache={})
    assert prog3 is not prog and execute.code_hash(prog3) == k1[0]


def test_kept_hashes_are_bounded():
    memory, config = _first(FIXTURES / "captures/radv-push_consts_ubo-w32.wlcap")
    for _ in range(execute.CODE_HASHES + 5):
        prog, _ = execute.program_for(memory, config, cache={})
        execute.code_hash(prog)
    assert len(execute._CODE_HASHES) <= execute.CODE_HASHES


def test_gb_addr_config_is_in_the_program_and_module_keys():
    """The image swizzle patterns compiled into a program depend on GB_ADDR_CONFIG: another value
    is another program and another module, the same value the same ones."""
    import dataclasses

    memory, config = _first(FIXTURES / "captures/radv-push_consts_ubo-w32.wlcap")
    assert config.gb_addr_config is None  # (captured before radv_capture recorded it)
    cache: dict = {}
    p0, _ = execute.program_for(memory, config, cache=cache)
    c1 = dataclasses.replace(config, gb_addr_config=0x444)
    c2 = dataclasses.replace(config, gb_addr_config=0)
    p1, _ = execute.program_for(memory, c1, cache=cache)
    p2, _ = execute.program_for(memory, c2, cache=cache)
    assert len({id(p0), id(p1), id(p2)}) == 3
    assert (
        execute.program_for(memory, dataclasses.replace(config, gb_addr_config=0x444), cache=cache)[0] is p1
    )
    keys = {execute.module_key(p, c, "wave", "numpy") for p, c in ((p0, config), (p1, c1), (p2, c2))}
    assert len(keys) == 3
