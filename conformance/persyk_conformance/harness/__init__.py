"""Harness checks (H-, DH-): what no static case can show, generated fresh per run: canaries,
torn tails, concurrent writers, held locks, killed recoveries (H-104) and the capture harness
(H-150..H-153).
"""
