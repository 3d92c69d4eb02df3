"""Converters from other tools' capture outputs to wavelift captures (.wlcap).

radv: the raw output of the project's RADV capture tool (tools/radv_capture/), `wavelift import-radv`.
"""
