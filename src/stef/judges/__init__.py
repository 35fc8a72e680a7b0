"""Judges: the offline symbolic judge and, where configured, LLM judges."""
