"""One Viewer per file; each module also has `page()`, the panel alone for an iframe."""
