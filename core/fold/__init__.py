"""The fold layer: the ADR fold, its stages, clip, notes and summariser, delivery, history and preview."""
