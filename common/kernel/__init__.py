"""The shared kernel: pure helpers every app uses (refusals, the history-keeping bulk
writer, text and identifier rules, request context, JSON Schema). No models; imports
nothing from the apps.
"""
