#!/usr/bin/env bash
# Makes sure the programs the test suite drives for real are installed: GNU tar and the sqlite3 CLI (the
# archive must open with both), util-linux's `script` (a real TTY for the restore prompt), git, openssl, and
# `age` (encrypted archives must open with the standard tool), PostgreSQL 15's server (the records contract runs on
# a throwaway cluster too), and Chromium (the dashboard's tests drive it with
# playwright-core; browser downloads are unavailable, Debian's package is the browser). On a fresh Debian machine, as root, it installs
# what is missing; elsewhere it names the packages and fails, so that no test is silently skipped for want of a
# tool.
set -euo pipefail

declare -A package_of=([tar]=tar [sqlite3]=sqlite3 [script]=bsdutils [git]=git [openssl]=openssl [age]=age [age-keygen]=age [chromium]=chromium)
missing=()
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${package_of[$tool]}")
done
# PostgreSQL's server programs (the throwaway clusters of test/helpers/postgres-server.ts): Debian keeps initdb,
# pg_ctl and postgres off PATH, in /usr/lib/postgresql/<version>/bin, so the check looks there, not on PATH.
postgres_bin_ok() {
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ] && return 0
  done
  return 1
}
postgres_bin_ok || missing+=(postgresql-15)
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing test dependencies: ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  if ! postgres_bin_ok; then
    echo "Error: postgresql-15 was installed but no initdb, pg_ctl and postgres are in /usr/lib/postgresql/*/bin" >&2
    exit 1
  fi
else
  echo "Error: the tests need these Debian packages: ${missing[*]}" >&2
  echo "Hint: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
