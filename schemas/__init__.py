"""JSON Schemas of the Persyk contract (package data of persyk_contract.schemas)."""
