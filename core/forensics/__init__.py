"""Forensics: why each cache write happened, what each compaction cost and lost, and whether it paid back."""
