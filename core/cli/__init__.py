"""The cli layer: the headless commands."""
