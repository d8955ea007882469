"""v1 append writes the records but never fsyncs session.jsonl before it acknowledges them
(APP-11). Only H-202 and H-203 may fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd:
      op == "append" and profile == "v1" and path.endswith("/session.jsonl"))
