"""Temporary: wavelift/errors.py is the home of refusals; this goes once the last importer moves."""
from .errors import CODES, Refusal, Refused, markdown_table  # noqa: F401
