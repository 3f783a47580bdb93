"""The actions layer: undoable commands on a session, and reading originals back."""
