"""foldscope app: the PySide6 GUI, thin adapters over foldscope.core."""
