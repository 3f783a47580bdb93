"""The request layer: tokens, bodies and their projection, plan, marks, compile, count, prefix, first round, trace."""
