#!/usr/bin/env bash
# Runs a command in a private network namespace that has only loopback, so no test can reach
# (or even resolve a name on) any other machine. Loopback servers on 127.0.0.1 still work.
set -euo pipefail
if [ "$#" -eq 0 ]; then echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; fi
if [ "$(id -u)" -eq 0 ]; then
  flags=(-n)          # root: a plain network namespace
else
  flags=(-r -n)       # a user: a user namespace too, mapped to root inside, so it may bring lo up
fi
exec unshare "${flags[@]}" -- bash -c 'ip link set lo up && exec "$@"' offline "$@"
