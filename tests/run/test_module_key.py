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


def test_a_key_refuses_a_program_translated_with_other_inputs():
    """A module key names the config's translation inputs; a program translated with others
    (session 47's gpu_check workers: no GB_ADDR_CONFIG) would be compiled and found under the key
    of another program.  The key refuses it (decision 0049, h129), for each backend's key and the
    NumPy native index key; the program made for the config keys as before."""
    import dataclasses

    import pytest

    from wavelift.backends.numpy import _index_key as index_key
    from wavelift.errors import OtherTranslation
    from wavelift.frontend.program import translate

    memory, config = _first(FIXTURES / "captures/radv-push_consts_ubo-w32.wlcap")
    c1 = dataclasses.replace(config, gb_addr_config=0x444)
    own, _ = execute.program_for(memory, c1, cache={})
    r = execute._program_bytes(memory, c1)
    code, base, entry = r if isinstance(r, tuple) else (r, c1.program_address, 0)
    sabi = execute._scratch_abi(c1)
    # without GB_ADDR_CONFIG (the config has one): another program under c1's key
    other = translate(code, c1.target, c1.wave_size, base, scratch_abi=sabi, entry=entry)
    assert execute.code_hash(other) == execute.code_hash(own)  # the same bytes: only the inputs differ
    for backend in ("numpy", "cuda"):
        with pytest.raises(OtherTranslation, match="GB_ADDR_CONFIG"):
            execute.module_key(other, c1, "lane", backend)
        execute.module_key(own, c1, "lane", backend)
    with pytest.raises(OtherTranslation):
        index_key(other, c1, c1.program_address)
    # the same bytes translated with every input the config has: the config's program
    same = translate(code, c1.target, c1.wave_size, base, scratch_abi=sabi, entry=entry, gb_addr_config=0x444)
    assert execute.module_key(same, c1, "lane", "numpy") == execute.module_key(own, c1, "lane", "numpy")
    # a border colour base or a wave size the config does not have: refused too
    for kw in ({"border_color_base": 0x1000}, {}):
        w = 64 if not kw else c1.wave_size
        p = translate(code, c1.target, w, base, scratch_abi=sabi, entry=entry, gb_addr_config=0x444, **kw)
        with pytest.raises(OtherTranslation):
            execute.module_key(p, c1, "wave", "numpy")


def test_a_disabled_scratch_abi_is_no_scratch_abi_and_hand_built_programs_are_not_checked():
    """translate's plan is the same for no scratch ABI and a disabled one (scratch.plan), so a
    program translated without one keys under a config whose ABI is disabled; a program that was
    not translated (Program.made_with None) has no inputs to disagree with (0049, h129)."""
    import dataclasses

    from wavelift.frontend.program import translate

    memory, config = _first(FIXTURES / "captures/radv-push_consts_ubo-w32.wlcap")
    assert not execute._scratch_abi(config).enabled
    r = execute._program_bytes(memory, config)
    code, base, entry = r if isinstance(r, tuple) else (r, config.program_address, 0)
    bare = translate(code, config.target, config.wave_size, base, entry=entry)
    own, _ = execute.program_for(memory, config, cache={})
    assert execute.module_key(bare, config, "lane", "numpy") == execute.module_key(
        own, config, "lane", "numpy"
    )
    hand = dataclasses.replace(own)  # (replace leaves made_with unset: as a hand-built program)
    assert hand.made_with is None
    other = dataclasses.replace(config, gb_addr_config=0x444, border_color_base=0x1000)
    assert execute.module_key(hand, other, "lane", "numpy") != execute.module_key(
        hand, config, "lane", "numpy"
    )


def test_a_module_key_keeps_its_hash_and_is_the_plain_tuple_elsewhere():
    """module_key's key (execute.ModuleKey) hashes and compares as the plain tuple of its parts --
    a cache filled under either finds the module under the other -- keeps that hash (worked out
    once: a kept run looks its module up every launch), and is copied and pickled as the plain
    tuple (a string's hash differs between processes: no kept hash leaves the process)."""
    import copy
    import pickle

    memory, config = _first(FIXTURES / "captures/radv-int64_div-w32.wlcap")
    prog, _ = execute.program_for(memory, config, cache={})
    key = execute.module_key(prog, config, "wave", "numpy")
    plain = tuple(key)
    assert type(key) is execute.ModuleKey and key == plain and hash(key) == hash(plain)
    assert {key: 1}[plain] == 1 and {plain: 2}[key] == 2
    for other in (pickle.loads(pickle.dumps(key)), copy.copy(key), copy.deepcopy(key)):
        assert type(other) is tuple and other == plain
    assert "_hash" not in pickle.dumps(key).decode("latin-1")
