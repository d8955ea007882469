"""Reports of a run (JSON, text, Markdown, JUnit), ``show CASE``, and ``compare`` of several
implementations side by side.
"""
