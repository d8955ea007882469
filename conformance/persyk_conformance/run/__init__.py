"""Running cases: one fresh workspace per case, the step conditions the runner arranges, matching
each answer, outcomes and expected-failure files, the progress line.
"""
