"""Plain files foldscope loads with importlib.resources: the vocabulary, the pricing table, the demo session, profiles."""
