#!/usr/bin/env bash
# Makes sure the programs the test suite drives for real are installed: GNU tar and the sqlite3 CLI (the
# archive must open with both), util-linux's `script` (a real TTY for the restore prompt), git, openssl, and
# `age` (encrypted archives must open with the standard tool), and Chromium (the dashboard's tests drive it with
# playwright-core; browser downloads are unavailable, Debian's package is the browser). On a fresh Debian machine, as root, it installs
# what is missing; elsewhere it names the packages and fails, so that no test is silently skipped for want of a
# tool.
set -euo pipefail

declare -A package_of=([tar]=tar [sqlite3]=sqlite3 [script]=bsdutils [git]=git [openssl]=openssl [age]=age [age-keygen]=age [chromium]=chromium)
missing=()
for tool in "${!package_of[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("${package_of[$tool]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing test dependencies: ${missing[*]}" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "Error: the tests need these Debian packages: ${missing[*]}" >&2
  echo "Hint: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
