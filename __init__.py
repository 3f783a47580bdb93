"""foldscope: a desktop inspector for the context window of LLM agents (core, app and resources)."""
