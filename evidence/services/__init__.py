"""Writes of the evidence app: the WSP v3 import (`wsp_import`) and its bulk write
(`wsp_write`).
"""
