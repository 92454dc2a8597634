#!/usr/bin/env bash
# Integration tests start private PostgreSQL and Redis servers from the installed binaries;
# the instance page test drives Debian's headless chromium.
# Install them when missing and we can (root with apt-get); otherwise say what to install.
set -uo pipefail
need=()
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${need[*]} for the integration tests"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null || \
  echo "could not install ${need[*]}: integration tests that need them will be skipped"
else
  echo "integration tests need: ${need[*]} (e.g. 'sudo apt-get install ${need[*]}'); they will be skipped"
fi
exit 0
