#!/usr/bin/env bash
# Installs the Debian packages feedingest needs, and only those that are missing.
# Each C library is checked with pkg-config first, so on a ready machine this does nothing.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-jsonschema)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)   # tests run in a private network namespace
command -v ip >/dev/null 2>&1 || missing+=(iproute2)          # ... and bring its loopback up
# The Fetch tests serve feeds with a real nginx on 127.0.0.1 (their own config; Debian's service is not used),
# and make its TLS certificate with openssl; scripts/fault_server.py needs only python3 (above).
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# The PostgreSQL store's tests and the scale benchmark start a throw-away server of their own (initdb and pg_ctl from
# /usr/lib/postgresql/<version>/bin, as the postgres user); Debian's own cluster and service are never used.
pg_server=no
for ctl in /usr/lib/postgresql/*/bin/pg_ctl; do [ -x "$ctl" ] && pg_server=yes; done
[ "$pg_server" = yes ] || missing+=(postgresql)

# pkg-config module -> Debian package
declare -A libs=(
  [expat]=libexpat1-dev
  [libcurl]=libcurl4-openssl-dev
  [zlib]=zlib1g-dev
  [libdeflate]=libdeflate-dev  # CRC-32 of gzip members (the Inflater checks the trailer itself; zlib inflates)
  [sqlite3]=libsqlite3-dev
  [libxxhash]=libxxhash-dev  # the store's XXH64 content and key hashes
  [libcrypto]=libssl-dev     # SHA-256 of bodies (OpenSSL's libcrypto, which libcurl links already)
  [libmnl]=libmnl-dev       # the route monitor (netlink) of the watch service
  [libsystemd]=libsystemd-dev  # sd_notify: watch as a Type=notify systemd service
  [yajl]=libyajl-dev         # JSON Feed: the streaming JSON parser under StreamingJSON
  [uchardet]=libuchardet-dev # the encoding of feeds that declare none and are not UTF-8
  [libxml-2.0]=libxml2-dev   # SafeHTML's HTML parser (--sanitize); Foundation's XMLParser, the test baseline, links it too
  [libpq]=libpq-dev          # the PostgreSQL store engine (libpq)
  [jemalloc]=libjemalloc-dev # the command's malloc: memory freed on other threads than allocated it (issue 18)
)
for module in "${!libs[@]}"; do
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists "$module"; then
    missing+=("${libs[$module]}")
  fi
done

# The tests validate real output against the JSON Schemas with Python's independent jsonschema package.
if ! python3 -c 'import jsonschema' >/dev/null 2>&1; then
  echo "setup: installing the jsonschema Python package" >&2
  python3 -m pip install --quiet jsonschema >&2 || missing+=(python3-jsonschema)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if [[ " ${missing[*]} " == *" postgresql "* ]] && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
  # Debian's package would create (and try to start) a cluster of its own; the tests never use one, so none is made.
  $sudo mkdir -p /etc/postgresql-common
  echo "create_main_cluster = false" | $sudo tee /etc/postgresql-common/createcluster.conf >/dev/null
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
