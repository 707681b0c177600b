#!/usr/bin/env bash
# deps.sh installs what the test suite and the benchmarks need beyond Go
# modules, from Debian's packages: Chromium for the browser tests (the
# default), wrk for `make bench` (`deps.sh wrk`).
set -u
want=${1:-chromium}
case "$want" in
chromium)
	if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
		exit 0
	fi
	why="the browser test"
	;;
wrk)
	command -v wrk >/dev/null 2>&1 && exit 0
	why="make bench (a load generator we did not write, beside our own)"
	;;
*)
	echo "deps: unknown dependency $want" >&2
	exit 2
	;;
esac
echo "deps: installing $want for $why" >&2
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	SUDO=
fi
if ! { $SUDO apt-get install -y "$want" >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null 2>&1 && $SUDO apt-get install -y "$want" >/dev/null 2>&1; }; }; then
	echo "deps: could not install $want (apt-get install -y $want); $why will fail in CI and skip elsewhere" >&2
	[ "${CI:-}" = "true" ] && exit 1
	[ "$want" = "wrk" ] && exit 1
fi
exit 0
