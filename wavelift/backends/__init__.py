"""Backends: NumPy (with its native tier) and CUDA; their disk caches follow disk_cache.py."""
