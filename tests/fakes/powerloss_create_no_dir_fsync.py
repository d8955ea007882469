"""v1 create fsyncs the header's file but no directory: neither the new session directory's
entry for session.jsonl nor the root's entry for the directory is durable (APP-3). Only
H-201 may fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd: op == "create" and profile == "v1" and is_dir)
