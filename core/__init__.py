"""foldscope core: pure Python, never Qt: the session model, readers, request measure, fold, actions, replay, store and CLI."""
