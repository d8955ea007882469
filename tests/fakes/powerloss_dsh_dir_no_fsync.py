"""dsh-v0 first append never fsyncs a directory after linking the log (DSH-18): the new log's
name, and its bucket's, may vanish. Only DH-103 may fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd: profile == "dsh-v0" and op == "append" and is_dir)
