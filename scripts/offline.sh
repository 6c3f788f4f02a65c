#!/usr/bin/env bash
# Runs a command in a private network namespace that has only loopback, so no test can reach
# (or even resolve a name on) any other machine. Loopback servers on 127.0.0.1 still work.
#
# The command gets a temporary directory of its own ($TMPDIR, which Foundation's temporaryDirectory follows), removed
# when it ends, however it ends: the tests' stores, feeds, servers and downloads (~85 MB a run) do not pile up in /tmp.
# Before removing it, this waits (up to a minute) for what still runs from it to go: the PostgreSQL servers' watchdogs
# stop their server only after the test process has exited. FEEDINGEST_KEEP_TMPDIR=1 keeps it and prints where it is.
set -euo pipefail
if [ "$#" -eq 0 ]; then echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; fi
if [ "$(id -u)" -eq 0 ]; then
  flags=(-n)          # root: a plain network namespace
else
  flags=(-r -n)       # a user: a user namespace too, mapped to root inside, so it may bring lo up
fi
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/feedingest-run.XXXXXX")
chmod 1777 "$run_tmp"   # as /tmp: the postgres user makes its server's directory here too
cleanup() {
  set +e  # the command's status is the script's, whatever happens here
  if [ "${FEEDINGEST_KEEP_TMPDIR:-}" = 1 ]; then echo "offline.sh: kept $run_tmp" >&2; return; fi
  for _ in $(seq 60); do pgrep -f -- "$run_tmp" >/dev/null || break; sleep 1; done
  rm -rf -- "$run_tmp" || echo "offline.sh: could not remove all of $run_tmp" >&2
}
trap cleanup EXIT
status=0
TMPDIR="$run_tmp" unshare "${flags[@]}" -- bash -c 'ip link set lo up && exec "$@"' offline "$@" || status=$?
exit "$status"
