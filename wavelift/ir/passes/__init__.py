"""The IR's passes, one per file, run in the order passes/pipeline.py gives."""
