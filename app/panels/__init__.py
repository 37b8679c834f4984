"""The panels: one Viewer per file, each a `StatePanel` (app/kit/states.py) named by its record in
app/kit/registry.py, which gives it a route of its own and a place in a chapter."""
