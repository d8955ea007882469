"""The reference adapter, after starting a helper that sleeps for 15 minutes in the adapter's own
session and process group (as a worker pool would): a runner that dies on a signal without
killing its adapters' process groups leaves the helper running, re-parented to init."""

import os
import subprocess
import sys

subprocess.Popen(["sleep", "900"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
os.execv(sys.executable, [sys.executable, "-m", "persyk_session.cli", "adapter"])
