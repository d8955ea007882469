"""No fsync anywhere: every os.fsync and os.fdatasync returns at once (the pi session manager's
way). Every power-loss check must fail on it; every kill-based check passes it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd: True)
