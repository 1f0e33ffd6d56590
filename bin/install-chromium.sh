#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser test (test/e2e/console.test.ts), when it is missing.
# Needs root (CI and the development machines have it); the test skips with a message where it is absent.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-chromium: /usr/bin/chromium is missing; run as root: apt-get install -y chromium" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
