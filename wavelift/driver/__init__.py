"""Our own runtime: AMDHSA code objects (codeobject), ROCr/CLR dispatch conventions (hsa),
the public Device API (device) and RADV/ACO shaders (aco)."""
from .codeobject import CodeObject, CodeObjectError, KernelDescriptor, KernelInfo  # noqa: F401
from .hsa import LaunchError, Local  # noqa: F401


def __getattr__(name):  # Device pulls in memory/stream; keep `import wavelift.driver` light
    if name in ("Device", "Buffer", "Kernel", "LoadedCodeObject", "LaunchRecord"):
        from . import device
        return getattr(device, name)
    if name in ("AcoShader",):
        from . import aco
        return getattr(aco, name)
    raise AttributeError(name)
