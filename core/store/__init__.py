"""The store layer: the SQLite library of imported sessions."""
