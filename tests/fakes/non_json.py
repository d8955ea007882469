"""Answers a run request with a line that is not JSON."""

import sys


def main() -> int:
    for line in sys.stdin:
        if '"hello"' in line:
            sys.stdout.write('{"protocol":1,"implementation":{"name":"non_json","version":"0",'
                             '"language":"python"},"capabilities":["read"]}\n')
        elif '"stop"' in line:
            return 0
        else:
            sys.stdout.write("Validating... done!\n")
        sys.stdout.flush()
    return 0


sys.exit(main())
