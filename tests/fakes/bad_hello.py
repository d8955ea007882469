"""A wrong hello: --protocol N speaks another version; --no-capabilities omits the list;
--unknown-capability declares one outside the closed list."""

import sys

from _fake import VALID, only_validate, serve

hello = {"protocol": 1, "implementation": {"name": "bad_hello", "version": "0",
         "language": "python"}, "capabilities": ["read"]}
if "--protocol" in sys.argv:
    hello["protocol"] = int(sys.argv[sys.argv.index("--protocol") + 1])
if "--no-capabilities" in sys.argv:
    del hello["capabilities"]
if "--unknown-capability" in sys.argv:
    hello["capabilities"] = ["read", "teleport"]

sys.exit(serve(only_validate(lambda args: VALID), hello=hello))
