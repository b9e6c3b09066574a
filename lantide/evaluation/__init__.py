"""``lantide eval``: how well a model analyses data in Lantide, measured on question sets.

A set (``question_set``) is one JSON file of cases; each case runs headless in a fresh
copy of its workspace through the same agent loop as the app (``runner``), is scored
(``scoring``) and reported as a table, JSON and an HTML page (``report``).
"""
