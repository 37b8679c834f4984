"""The Panel app: one Viewer per panel, the article page and single-panel routes."""
