"""The shared kernel: pure helpers every app uses; no models, imports nothing from the apps."""
