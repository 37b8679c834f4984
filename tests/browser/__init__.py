"""Browser tests (Chromium via pytest-playwright); see conftest.py."""
