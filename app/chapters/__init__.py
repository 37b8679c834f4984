"""The chapters and their pages: the prose and its questions, the live chapter, the static
chapter page and its stills."""
