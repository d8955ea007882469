"""v1 recover publishes the fragment under recovery/ without fsyncing its bytes, then
truncates (RCV-6): a power cut may keep the cut and an empty copy. Only H-204 may fail."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd:
      op == "recover" and profile == "v1" and not is_dir and "/recovery/" in path)
