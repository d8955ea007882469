"""``persyk-conformance site``: a static site from run reports (docs/maintainers/site.md).

``_model`` turns reports into frozen values (sans-IO: dicts in, values out); ``_render`` writes
the pages through Jinja2 templates (``templates/``, autoescaped: a report's text is data, never
markup) and the badges. No page needs a server or the network: filters are a few lines of
script over the page's own table, and every link is relative (but an implementation's
declared http(s) homepage), so the folder works from ``file://`` and from any static host.
May import: base, cases, reports, bench.
"""
