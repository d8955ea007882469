"""captureStart creates the WAV and writes its header but never fsyncs it before appending
recording.started and replying (CAP-1, CAP-20): after a power cut the started recording may
have an empty WAV. Only H-208 may fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd:
      op == "captureStart" and not is_dir and path.endswith(".wav"))
