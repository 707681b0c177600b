#!/usr/bin/env bash
# deps.sh installs what the test suite and the benchmarks need beyond Go
# modules. By default, for the tests: Chromium (Debian's package) for the tests
# in which a real browser walks a fan's whole path, and axe-core (npm, MPL-2.0),
# the accessibility engine those tests inject into every storefront page state,
# into scripts/axe/node_modules (ignored by git) at the version pinned by
# scripts/axe/package-lock.json; promtool (Debian's prometheus package),
# which checks and tests the alert rules in deploy/; and python3, which runs
# the independent verifier of the fair draw (docs/verifier/verify_draw.py)
# that a Go test checks verify-draw against. `deps.sh wrk` installs wrk for
# `make bench`.
set -u
cd "$(dirname "$0")/.."
want=${1:-chromium}

if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	SUDO=
fi
apt_install() {
	$SUDO apt-get install -y "$@" >/dev/null 2>&1 || { $SUDO apt-get update >/dev/null 2>&1 && $SUDO apt-get install -y "$@" >/dev/null 2>&1; }
}

case "$want" in
chromium) ;;
wrk)
	command -v wrk >/dev/null 2>&1 && exit 0
	echo "deps: installing wrk for make bench (a load generator we did not write, beside our own)" >&2
	if ! apt_install wrk; then
		echo "deps: could not install wrk (apt-get install -y wrk); make bench will fail" >&2
		exit 1
	fi
	exit 0
	;;
*)
	echo "deps: unknown dependency $want" >&2
	exit 2
	;;
esac

failed=0
if ! command -v python3 >/dev/null 2>&1; then
	echo "deps: installing python3 for the independent verifier of the draw (docs/verifier)" >&2
	if ! apt_install python3; then
		echo "deps: could not install python3 (apt-get install -y python3); the verifier cross-check will fail in CI and skip elsewhere" >&2
		failed=1
	fi
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	echo "deps: installing chromium for the browser tests" >&2
	if ! apt_install chromium; then
		echo "deps: could not install chromium (apt-get install -y chromium); the browser tests will fail in CI and skip elsewhere" >&2
		failed=1
	fi
fi

if ! command -v promtool >/dev/null 2>&1; then
	echo "deps: installing promtool (Debian's prometheus package) for the alert rules' check" >&2
	if ! DEBIAN_FRONTEND=noninteractive apt_install --no-install-recommends prometheus; then
		echo "deps: could not install promtool (apt-get install -y prometheus); the alert rules' check will fail in CI and skip elsewhere" >&2
		failed=1
	fi
fi

if [ ! -f scripts/axe/node_modules/axe-core/axe.min.js ]; then
	if ! command -v npm >/dev/null 2>&1; then
		echo "deps: installing npm for axe-core" >&2
		apt_install npm || true
	fi
	echo "deps: installing axe-core for the browser tests' accessibility check" >&2
	if ! npm ci --prefix scripts/axe --no-audit --no-fund --loglevel=error >/dev/null; then
		echo "deps: could not install axe-core (npm ci --prefix scripts/axe); the storefront browser test will fail in CI and skip elsewhere" >&2
		failed=1
	fi
fi

[ "$failed" -ne 0 ] && [ "${CI:-}" = "true" ] && exit 1
exit 0
