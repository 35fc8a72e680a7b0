"""LLM plumbing: settings, an OpenAI-compatible client, a persistent cache, local models.

Lower layer than the judges: nothing here knows about scores or evaluations.
"""
