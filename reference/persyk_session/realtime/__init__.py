"""Realtime evidence (docs/spec.md section RT, and the ordering rules of section CAP): credential
sanitizing, the provider-event evidence planner, replay and the ordering engine of ordered
publication. Imports the base, ``read``, ``write`` and ``media``.
"""
