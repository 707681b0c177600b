#!/usr/bin/env bash
# run.sh starts the demo stack: Foyer in front of the booking service, all on
# embedded memory stores. Ctrl-C stops everything.
#
# Its ports come from the environment (make run passes them on; docs/development.md,
# "Development"), with these defaults:
#   FOYER_PORT=8080        the site, what a fan opens
#   FOYER_ADMIN_PORT=2019  Foyer's admin API (the Caddyfile reads both)
#   BOOKING_PORT=9000      the booking service, behind Foyer
#   BOOKING_OPS_PORT=9001  the booking service's /metrics and /readyz
# BIN (default bin) holds the binaries, RUN_DIR (default .run, or
# .run/port-<FOYER_PORT> on another port) the logs.
set -euo pipefail
cd "$(dirname "$0")/.."

FOYER_PORT=${FOYER_PORT:-8080}
FOYER_ADMIN_PORT=${FOYER_ADMIN_PORT:-2019}
BOOKING_PORT=${BOOKING_PORT:-9000}
BOOKING_OPS_PORT=${BOOKING_OPS_PORT:-9001}
BIN=${BIN:-bin}
# A second stack on other ports keeps its logs apart from the first's.
default_run_dir=.run
[[ $FOYER_PORT == 8080 ]] || default_run_dir=.run/port-$FOYER_PORT
RUN_DIR=${RUN_DIR:-$default_run_dir}
[[ $BIN == /* ]] || BIN="$PWD/$BIN"
[[ $RUN_DIR == /* ]] || RUN_DIR="$PWD/$RUN_DIR"
export FOYER_PORT FOYER_ADMIN_PORT BOOKING_PORT

# Every port is checked before anything starts: a second make run would
# otherwise find the first one's servers answering its readiness checks and
# say it had started while its own servers had failed.
names=(FOYER_PORT FOYER_ADMIN_PORT BOOKING_PORT BOOKING_OPS_PORT)
seen=" "
for name in "${names[@]}"; do
	port=${!name}
	if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
		echo "$name=$port is not a port number (1-65535)." >&2
		exit 2
	fi
	if [[ $seen == *" $port "* ]]; then
		echo "$name=$port: that port is given twice; each of ${names[*]} needs its own." >&2
		exit 2
	fi
	seen+="$port "
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "Port $port ($name) is already in use: another make run, or another server, is listening there." >&2
		echo "Stop it, or choose another port, for example: make run $name=$((port + 1))" >&2
		exit 1
	fi
done

mkdir -p "$RUN_DIR"
pids=()
cleanup() {
	trap - EXIT INT TERM
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
}
# Ctrl-C ends the script here, so that the servers it stops are not then
# reported as having stopped by themselves.
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# failed says that a server did not start or stopped, with the end of its
# log, which is where the reason is, and exits non-zero.
failed() {
	echo "$1; the end of $2:" >&2
	tail -n 20 "$2" | sed 's/^/  | /' >&2
	exit 1
}

# ready waits, up to 10 s, until url answers, while the server's process is
# alive: a server that exits is reported at once, not after the wait.
ready() {
	local what=$1 pid=$2 url=$3 log=$4
	for _ in $(seq 1 100); do
		curl -fs -o /dev/null "$url" && return 0
		kill -0 "$pid" 2>/dev/null || failed "$what exited as it started" "$log"
		sleep 0.1
	done
	failed "$what did not answer $url within 10 s" "$log"
}

XDG_DATA_HOME="$RUN_DIR" XDG_CONFIG_HOME="$RUN_DIR" "$BIN/foyer" run --config Caddyfile --adapter caddyfile >"$RUN_DIR/foyer.log" 2>&1 &
foyer_pid=$!
pids+=("$foyer_pid")
ready Foyer "$foyer_pid" "http://127.0.0.1:$FOYER_PORT/_waiting-room/jwks.json" "$RUN_DIR/foyer.log"

# The booking service trusts the passes Foyer signs, through its JWKS, for the
# Caddyfile's room (demo) and issuer (the default, foyer) only.
# Its /metrics and /readyz are on 127.0.0.1:$BOOKING_OPS_PORT, out of the gateway's reach.
"$BIN/booking" -addr "127.0.0.1:$BOOKING_PORT" -ops-addr "127.0.0.1:$BOOKING_OPS_PORT" -seed-demo -admin-token dev-admin -room demo -waitlist \
	-jwks "http://127.0.0.1:$FOYER_PORT/_waiting-room/jwks.json" \
	-public-url "http://localhost:$FOYER_PORT" >"$RUN_DIR/booking.log" 2>&1 &
booking_pid=$!
pids+=("$booking_pid")
ready "The booking service" "$booking_pid" "http://127.0.0.1:$BOOKING_PORT/healthz" "$RUN_DIR/booking.log"
kill -0 "$foyer_pid" 2>/dev/null || failed "Foyer stopped" "$RUN_DIR/foyer.log"

cat <<MSG

  Foyer is running.  Open  http://localhost:$FOYER_PORT/

  Two fans shop at once and 30 more may come in each minute: open a few
  private windows to queue behind them. A fan whose tickets are delivered
  frees their slot for the next, and keeps their order's link (/tickets/...),
  which works without queueing again. Logs are in ${RUN_DIR#"$PWD"/}/. Ctrl-C stops everything.

MSG

# Until Ctrl-C: if a server stops by itself, say which and why.
status=0
wait -n "${pids[@]}" || status=$?
if ! kill -0 "$foyer_pid" 2>/dev/null; then
	failed "Foyer stopped (exit status $status)" "$RUN_DIR/foyer.log"
fi
failed "The booking service stopped (exit status $status)" "$RUN_DIR/booking.log"
