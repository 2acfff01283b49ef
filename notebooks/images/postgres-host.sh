#!/usr/bin/env bash
# Makes the image benchbook/postgres-host:VERSION from this machine's own
# PostgreSQL (Debian's postgresql package): no registry is asked. It holds
# PostgreSQL's bin, lib and share dirs, the shared libraries they link
# (ldd), /bin/sh (initdb runs "postgres -V" through it) and the time zones,
# with PATH set to PostgreSQL's bin dir: what backend.postgres(image = ...)
# needs. Run as root (or a member of the docker group) with dockerd running.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
base=$(dirname "$bin")
version=$(basename "$base")
ref=${1:-benchbook/postgres-host:$version}
list=$(mktemp)
trap 'rm -f "$list"' EXIT
{
  find "$base" "/usr/share/postgresql/$version" -type f
  find /usr/share/zoneinfo -type f 2>/dev/null || true
  echo /bin/sh
  for f in "$bin"/* /bin/sh $(find "$base/lib" -name '*.so'); do
    ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
  done
} | sort -u >"$list"
# -h follows symlinks: the image holds files, not links into a host layout.
tar -ch --files-from="$list" --transform 's,^/,,' 2>/dev/null |
  docker import -c "ENV PATH=$bin:/usr/bin:/bin" -c "ENV LANG=C" - "$ref" >/dev/null
echo "$ref"
