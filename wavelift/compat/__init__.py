"""Drop-in entry points for other projects' GPU-less test setups (tinygrad's mock GPU:
``wavelift.compat.tinygrad``; docs/tinygrad.md)."""
