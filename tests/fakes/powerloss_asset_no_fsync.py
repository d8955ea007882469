"""assetWrite links the asset's bytes under assets/ and returns the reference without fsyncing
the bytes (AST-18): the name may survive a power cut with the file empty. Only H-206 may
fail on it."""

from _powerloss import serve

serve(lambda op, profile, path, is_dir, fd:
      op == "assetWrite" and not is_dir and "/assets/" in path)
