"""JSON Schemas of the Persyk session format (package data)."""
