"""Data checks: tests over the labelled and gold-only files in ``../shared/data``.

They are not part of the README's test command (a user's clone has no such folder);
``.ci/run`` runs them as a separate step when the folder is there:
``.venv/bin/python -m pytest checks -p no:cacheprovider``.
"""
