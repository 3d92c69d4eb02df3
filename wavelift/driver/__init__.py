"""Our own runtime: AMDHSA code objects (codeobject), ROCr/CLR dispatch conventions (hsa),
the public Device API (device), RADV/ACO shaders (aco) and the records both launch paths
share (launch)."""

from .codeobject import CodeObject, CodeObjectError, KernelDescriptor, KernelInfo  # noqa: F401
from .hsa import LaunchError, Local  # noqa: F401


def __getattr__(name):  # Device pulls in memory/stream; keep `import wavelift.driver` light
    if name in ("Device", "Kernel", "LoadedCodeObject"):
        from . import device

        return getattr(device, name)
    if name in ("Buffer", "LaunchRecord"):
        from . import launch

        return getattr(launch, name)
    if name in ("AcoShader",):
        from . import aco

        return getattr(aco, name)
    raise AttributeError(name)
