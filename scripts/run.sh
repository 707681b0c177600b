#!/usr/bin/env bash
# run.sh starts the demo stack: Foyer on :8080 in front of the booking service on
# 127.0.0.1:9000, all on embedded memory stores. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .run

cleanup() {
	trap - EXIT INT TERM
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
}
pids=()
trap cleanup EXIT INT TERM

XDG_DATA_HOME="$PWD/.run" XDG_CONFIG_HOME="$PWD/.run" ./bin/foyer run --config Caddyfile --adapter caddyfile >.run/foyer.log 2>&1 &
pids+=($!)

for _ in $(seq 1 100); do
	curl -fs -o /dev/null http://127.0.0.1:8080/_waiting-room/jwks.json && break
	sleep 0.1
done
if ! curl -fs -o /dev/null http://127.0.0.1:8080/_waiting-room/jwks.json; then
	echo "Foyer did not start; see .run/foyer.log" >&2
	tail -n 20 .run/foyer.log >&2
	exit 1
fi

# The booking service trusts the passes Foyer signs, through its JWKS, for the
# Caddyfile's room (demo) and issuer (the default, foyer) only.
# Its /metrics and /readyz are on 127.0.0.1:9001, out of the gateway's reach.
./bin/booking -addr 127.0.0.1:9000 -ops-addr 127.0.0.1:9001 -seed-demo -admin-token dev-admin -room demo \
	-jwks http://127.0.0.1:8080/_waiting-room/jwks.json \
	-public-url http://localhost:8080 >.run/booking.log 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
	curl -fs -o /dev/null http://127.0.0.1:9000/healthz && break
	sleep 0.1
done
if ! curl -fs -o /dev/null http://127.0.0.1:9000/healthz; then
	echo "the booking service did not start; see .run/booking.log" >&2
	tail -n 20 .run/booking.log >&2
	exit 1
fi

cat <<MSG

  Foyer is running.  Open  http://localhost:8080/

  Two fans shop at once and 30 more may come in each minute: open a few
  private windows to queue behind them. A fan whose tickets are delivered
  frees their slot for the next, and keeps their order's link (/tickets/...),
  which works without queueing again. Logs are in .run/. Ctrl-C stops everything.

MSG
wait -n "${pids[@]}"
