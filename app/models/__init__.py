"""Thin Qt item models over the core's sessions and replays."""
