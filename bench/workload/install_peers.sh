#!/bin/sh
# Installs the tools benchbook's workload is compared with. Nothing of
# theirs is committed. wrk and pgbench come from Debian, vegeta from the Go
# module proxy.
set -e
if ! command -v wrk >/dev/null || ! command -v pgbench >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq wrk postgresql-client
fi
command -v vegeta >/dev/null || GOBIN=${GOBIN:-$HOME/go/bin} go install github.com/tsenart/vegeta/v12@latest
