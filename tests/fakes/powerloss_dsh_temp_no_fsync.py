"""dsh-v0 first append links its temporary file without fsyncing its bytes (DSH-18): the log
may survive empty. Only DH-103 may fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd:
      profile == "dsh-v0" and op == "append" and not is_dir and ".tmp" in path)
