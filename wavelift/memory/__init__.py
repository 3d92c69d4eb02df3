"""Guest memory (sparse 48-bit GPU VA space) and capture files."""

from .guest import Allocation, GuestMemory, GuestMemoryError, canonical  # noqa: F401
