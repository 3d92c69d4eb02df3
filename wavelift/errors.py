"""wavelift's two kinds of error, in one place.

Refusals: every dispatch that is not carried out says why, with a stable dotted code. CODES is
the one table of refusal codes; docs/refusals.md is generated from it
(`python -m wavelift.errors > docs/refusals.md`). Add a code here before raising it.

UserError: a problem the user can fix (missing file, bad option), raised by the driver, the
disassembler and the commands; the command line prints it as one line.
"""

from __future__ import annotations

from dataclasses import dataclass

CODES: dict[str, str] = {
    # stream
    "stream.unknown_opcode": "a PM4 type-3 packet whose opcode the walker does not know",
    "stream.truncated": "a packet runs past the end of its buffer",
    "stream.malformed": "a packet whose body is not what its opcode requires",
    "stream.bad_packet_type": "a PM4 header of type 0 or 1 (not used by compute streams)",
    "stream.ib_depth": "INDIRECT_BUFFER calls nested deeper than the limit",
    "stream.ib_loop": "INDIRECT_BUFFER chains that come back to an IB already walked",
    "stream.bad_address": "a packet names guest memory that no allocation holds",
    "stream.wait_unmet": "WAIT_REG_MEM whose condition does not hold (it would wait forever)",
    "stream.unsupported": "a packet mode the walker does not carry out (GDS, perf counters, predication, register address spaces)",
    "stream.budget": "the streams copy more dwords (IBs: fan-out and chains) or walk more packets than the limit (counted over all of a capture's streams)",
    "stream.dma_budget": "DMA_DATA packets copy or fill more bytes than the limit (counted over all of a capture's streams)",
    "stream.dispatch_budget": "a capture's streams start more dispatches, or run more instructions in all, than the limit",
    # captures
    "capture.corrupt": "a capture file that is truncated or corrupt (magic, checksums, bounds); nothing of it is loaded",
    "capture.version": "a capture file of a format version this wavelift does not read",
    "capture.too_large": "a capture over a loading limit (metadata size or nesting, counts of allocations, extents or streams, name length, total guest memory); checked before anything is built",
    "capture.target": "a capture made for a target wavelift does not replay",
    # dispatch setup
    "dispatch.no_program": "COMPUTE_PGM_LO/HI were never written",
    "dispatch.grid_too_large": "the grid has more waves than the limit",
    "dispatch.empty_block": "COMPUTE_NUM_THREAD_* gives a workgroup of zero threads",
    "dispatch.user_sgpr": "RSRC2.USER_SGPR is larger than 16",
    "dispatch.budget_exceeded": "a wave ran past its instruction budget (by default sized from the program and the grid)",
    "dispatch.time_exceeded": "the dispatch ran past the wall-clock limit (WAVELIFT_TIME_LIMIT; off by default)",
    "dispatch.deferred_reach": "a deferred CUDA dispatch that had to run again reached memory it had no device copy of when it was launched (WAVELIFT_CUDA_DEFER=off runs it)",
    "dispatch.windows_too_large": "the windows the program can reach need more bytes than the limit",
    "dispatch.bad_target": "the target is not one wavelift knows",
    "dispatch.bad_register": "a dispatch register holds a value the hardware does not define (TIDIG_COMP_CNT 3, partial > full workgroup, more than 1024 threads per workgroup, LDS over 64 KiB)",
    "dispatch.unsupported_mode": "DISPATCH_INITIATOR asks for something wavelift does not carry out (COMPUTE_SHADER_EN clear, ORDERED_APPEND, thread dimensions with start values)",
    # program
    "program.decode_error": "the program's bytes do not decode",
    "program.unsupported_instruction": "an instruction wavelift does not translate",
    "program.bad_address": "the program address lies outside guest memory",
    "program.bad_jump": "a computed jump (s_setpc/s_swappc) to an address that is not a decoded instruction",
    # images (frontend/image.py: a T# an active lane uses that is not carried out exactly)
    "image.unsupported_layout": "an image whose T# SW_MODE is not laid out for its type and texel size (laid out: linear and, on GFX10/10.3, every 256B/4KB/64KB S, D, R, Z mode and _X/_T form addrlib has a pattern for, decision 0021; the _X/_T modes only when the capture records GB_ADDR_CONFIG with a 256-byte pipe interleave), whose base has bits set inside its swizzle block other than an _X/_T mode's pipe/bank XOR, or that is DCC-compressed",
    "image.unsupported_format": "an image whose T# IMG_FORMAT is not converted exactly (SRGB, FLOAT_CLAMP, block-compressed, FMASK, YUV, 1-bit, buffer-only and reserved formats) or whose DST_SEL is a reserved value; an image_store whose dmask leaves out a channel of its format or whose DST_SEL is not the identity, to a USCALED/SSCALED/5_9_9_9 format, of an integer outside its channel or a NaN to a 16/11/10-bit float; a load of a NaN from a 16/11/10-bit float, a d16 load of a channel whose 16-bit form needs rounding or narrowing, or out of range where the result would hold the format's default 1; an image atomic on a format other than R32_UINT/R32_SINT (32-bit) or 32_32_UINT/32_32_SINT (64-bit, RADV's R64)",
    "buffer.unsupported_format": "a typed buffer access (buffer_*_format_*, tbuffer_*) in range whose format is not converted exactly (as image.unsupported_format), partly out of range, through a swizzled V#, a store of fewer channels than its format has, a store or load that image.unsupported_format would refuse, or an out-of-range load whose result would hold the format's default 1",
    "image.unsupported_descriptor": "an image whose T# TYPE is a reserved value (1..7) or not one the instruction's dim reads (cube, MSAA), whose MIN_LOD is set, BASE_LEVEL..LAST_LEVEL lie outside its MAX_MIP + 1 levels, BASE_ARRAY lies past DEPTH (arrays) or is set (1-D/2-D; a 3-D T# ignores it, ARRAY_PITCH being 0), a custom pitch (DEPTH/PITCH of a 1-D/2-D T#), a 3-D view of one level's slices (ARRAY_PITCH), or sets fields wavelift does not honour; an image_load_mip/image_store_mip past LAST_LEVEL; a coordinate between a mip level's rounded-down and rounded-up size; a layer other than 0 through a T# that is not an array; a 1-D T# read by a 2-D dim (RADV's meta copies) unless linear, of one level and at y = 0; an image atomic out of range or through the null descriptor; an image_get_resinfo through a T# of another TYPE, asking for a result its type does not define, of a level past LAST_LEVEL or a 1-D width minified to 0; a tfe load, sample or gather through the null T# (whether that is a fail is not established)",
    "image.unsupported_sampler": "a sample or gather through an S# that is not carried out exactly (anisotropy, min/max reduction, a depth-compare function on a sample without compare, half-border or mirror-once-border address modes, a border mode through a T# BC_SWIZZLE of 6 or 7, degamma/coordinate-truncation/derivative-adjust/mip-preclamp bits, LOD_BIAS_SEC, reserved bits (GFX10/10.3's or GFX11's, decision 0044), a T# with CORNER_SAMPLES, unnormalized coordinates with offsets or WRAP/MIRROR, MIN_LOD or the LOD clamp above MAX_LOD, an S# LOD_BIAS with _l/_lz where the LOD matters, MIN_LOD above 0 or MAX_LOD 0 where one level's min and mag filters differ), linear filtering or a linear mip blend of an integer format, a gather between two mip levels, a linear mip blend with given derivatives or under _lz, a d16 result of an integer format, NaN or below f16's smallest normal; an image_get_lod through an S# with a LOD bias, LOD_BIAS_SEC, anisotropy, DERIV_ADJUST_EN, MIP_POINT_PRECLAMP, unnormalized coordinates, MIN_LOD above MAX_LOD, reserved S# bits or a T# with CORNER_SAMPLES",
    "image.sampling_precision": "a sample or gather whose result the hardware's fixed-point precision decides and no public rule fixes: a point-sampled or gathered coordinate within 2**-7 texel below a texel boundary, an LOD within 2**-8 above 0 choosing between the min and mag filters (or an implicit LOD whose derivatives leave that choice open, or a quad with an inactive lane), a coordinate not finite or 2**15 texels or more from 0, linear filtering over an infinite or NaN texel, a depth compare with a NaN, a NaN LOD or LOD clamp, a nearest mip level or linear mip weight the LOD's precision or the derivatives leave open, an array layer that is not an integer; an image_get_lod whose derivatives are not axis-aligned (Vulkan's approximations of rho differ by more than 2**-8 in log2), whose LOD is 16 or more from 0 (all-zero derivatives included), whose quad has an inactive lane, or whose clamped LOD lies past the view's last level",
    "image.custom_border_color": "a sample or gather that takes a border texel through a REGISTER (custom) border colour (GFX10/10.3, decision 0043) without a border-colour table (the stream never wrote TA_CS_BC_BASE_ADDR; GFX11's table is not carried out), or whose table entry has a component in a channel of the image's format that is not one of the format's values (out of range, between two of its values, a NaN, an infinity or an f32 denormal: the hardware's conversion is not established there), of a USCALED/SSCALED/5_9_9_9 format, or read through a DST_SEL of a channel the format lacks (an entry outside every window -- past the table's allocation -- is an escape)",
    "image.cube_edge": "a cube-map sample (MIMG dim CUBE) whose texels are not all inside one face (at or across a face edge or corner: the hardware's seamless rule is not established), with a face coordinate outside [1, 2], a face id that is not an integer 0..5 (+ 8 x layer) or a cube layer past the view's, through a T# whose TYPE is not CUBE, or whose LOD would come from derivatives (implicit LOD, _b)",
    "float.rounding_mode": "a float instruction runs with MODE.FP_ROUND other than round-to-nearest-even",
    # scratch
    "scratch.no_tmpring": "SCRATCH_EN is set but the stream never wrote COMPUTE_TMPRING_SIZE",
    "scratch.size_zero": "SCRATCH_EN is set but TMPRING_SIZE.WAVESIZE (or WAVES) is zero",
    "scratch.no_base": "GFX11: SCRATCH_EN is set but COMPUTE_DISPATCH_SCRATCH_BASE_LO was never written",
    "scratch.too_large": "more than 256 KiB of scratch per wave",
    "scratch.offset_written": "a value the program wrote into the scratch offset register reaches a scratch address",
    "scratch.ambiguous_base": "a buffer access whose base is the scratch base on one path and another user SGPR on another",
    # execution
    "escape": "an access outside every window (or outside the wave's scratch)",
    "backend.unavailable": "the selected backend cannot run here",
    "backend.bad_report": "the CUDA kernel's report names what the module cannot have flagged (a refusal's ordinal or instruction outside its tables) or written (a byte marked outside every window, on the arena path): an internal defect, refused so that nothing of the run lands",
    "backend.proof": "a CUDA dispatch run in place on a proof that it cannot be refused flagged, escaped, or stored into a preloaded word or outside its windows (WAVELIFT_CUDA_INPLACE=proved): an internal defect; the device copies it ran on are unusable after (every later dispatch on them is refused, and so is a host read of bytes only the device held); also every deferred in-place dispatch queued after such a one, and a deferred one whose runs could not be read back (a device fault reading its aside; decision 0049, amendments h134, h137)",
}

# the codes no other way of running the dispatch may undo (execute's deeper trace): their run
# broke what another would run on (backend.proof: the device copies are unusable)
FINAL: frozenset[str] = frozenset({"backend.proof"})


@dataclass(frozen=True)
class Refusal:
    code: str
    message: str

    def __post_init__(self):
        if self.code not in CODES:
            raise ValueError(f"unregistered refusal code {self.code!r}")

    @property
    def final(self) -> bool:
        """Whether the dispatch may not be run again another way (FINAL)."""
        return self.code in FINAL

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class Refused(Exception):
    """Raised inside the pipeline; carries the Refusal that the DispatchResult reports."""

    def __init__(self, code: str, message: str):
        self.refusal = Refusal(code, message)
        super().__init__(str(self.refusal))


class DeferredLost(RuntimeError):
    """Reading the result of a deferred CUDA dispatch whose report could not be read, or that
    could not be run again, because reading the queue raised (Resident.flush: the exception
    went to the caller that read it; decision 0029, helper-96 amendment)."""


class OtherTranslation(RuntimeError):
    """A module key asked for a program with a dispatch whose translation inputs (target, wave
    size, scratch ABI, GB_ADDR_CONFIG, border colour base) are not the ones the program was
    translated with: the key would name another program's module (decision 0049, h129).  A
    caller's defect, never a dispatch's: execute translates with the dispatch's own inputs
    (program_for), so this is not a refusal."""


class UserError(Exception):
    """A problem the user can fix (missing file, bad option); printed as one line."""


def markdown_table() -> str:
    rows = ["| code | meaning |", "|---|---|"]
    rows += [f"| `{c}` | {d} |" for c, d in CODES.items()]
    return "# Refusal codes\n\nGenerated from `wavelift/errors.py`.\n\n" + "\n".join(rows) + "\n"


if __name__ == "__main__":
    import sys

    from wavelift.terminal import quiet_broken_pipe  # `| head`: no BrokenPipeError traceback

    sys.exit(quiet_broken_pipe(lambda: print(markdown_table(), end="")))
