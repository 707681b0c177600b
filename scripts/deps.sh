#!/usr/bin/env bash
# deps.sh installs what the test suite needs beyond Go modules: Chromium, for
# the test in which a real browser walks a fan's whole path.
set -u
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
	exit 0
fi
echo "deps: installing chromium for the browser test" >&2
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	SUDO=
fi
if ! { $SUDO apt-get install -y chromium >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null 2>&1 && $SUDO apt-get install -y chromium >/dev/null 2>&1; }; }; then
	echo "deps: could not install chromium (apt-get install -y chromium); the browser test will fail in CI and skip elsewhere" >&2
	[ "${CI:-}" = "true" ] && exit 1
fi
exit 0
