#!/usr/bin/env python3
"""Runs a command and prints its peak resident set size, measured by the kernel.

Usage: peak_rss.py COMMAND [ARG...]
The command inherits stdin and stderr; its stdout goes to /dev/null. When it ends, one JSON line goes to
stdout: {"maxrss_kib": N, "status": S}. The command is forked from this small process, so its ru_maxrss
(wait4) counts only its own memory: a child's figure can never be below the peak of the process that
forked it, which is why a large test process cannot measure its children directly.
"""
import json
import os
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps({"maxrss_kib": usage.ru_maxrss, "status": code}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
