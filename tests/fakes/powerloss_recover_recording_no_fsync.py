"""recoverRecording repairs the interrupted WAV (cuts the partial frame, writes the sizes) but
never fsyncs it before appending recording.interrupted and replying (CAP-25, DUR-4, DUR-5):
after a power cut the session may report a recovered recording whose WAV still has its
placeholder sizes. Only H-211 may fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd:
      op == "recoverRecording" and not is_dir and path.endswith(".wav"))
