"""The request layer: tokens, bodies and their projection, the envelope, plan, marks, compile, count, prefix, first round, trace."""
