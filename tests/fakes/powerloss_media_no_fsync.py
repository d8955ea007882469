"""replay writes each media asset but never fsyncs its bytes before appending the entry that
names it (RT-7): after a power cut an entry may point at an empty asset. Only H-210 may fail
on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd: op == "replay" and not is_dir and "/assets/" in path)
