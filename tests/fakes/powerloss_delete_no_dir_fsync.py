"""deleteSession renames the session into .persyk-deleted/ and removes the staged tree without
fsyncing a directory (CAP-29): after a power cut the acknowledged deletion may be undone, the
session back at its place. Only H-207 may fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd: op == "deleteSession" and is_dir)
