"""The C-family lowering both C++ targets build on: the CUDA kernel (backends/cuda/) and the NumPy
backend's native tier (backends/native/, host C++).

``lowering.py`` turns a pure IR value op into one C expression (the op -> expression tables,
constant literals, conversions); ``prelude.py`` loads the header files those expressions call
(``types.h``, ``prelude.h``: the ops' semantics, written once) and the target's own definitions
(``host.h`` for the host; backends/cuda/prelude.py for CUDA).  Neither target imports the other.
"""
