"""The readout layer: the Qt-free facts the panels and the report show."""
