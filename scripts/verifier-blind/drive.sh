#!/bin/bash
# drive.sh <name> <with_prequeue 1|0>: runs one real room on loopback, joins fans with curl,
# saves the draw endpoint and fairness report JSON, stops the server.
set -u
NAME=$1; PRE=$2
D=run/$NAME; rm -rf "$D"; mkdir -p "$D/jars"
B=http://127.0.0.1:18480
FOYER=../../bin/foyer
ADMIN="--address 127.0.0.1:18419"
rm -rf /tmp/verifier-blind-caddy
if [ "$PRE" = 1 ]; then
  ./mkconf.sh 6 30 900 120 "$D/Caddyfile"
else
  ./mkconf.sh 0 2 900 120 "$D/Caddyfile"
  sed -i '/prequeue_start/d;/shuffle_at_event_start/d' "$D/Caddyfile"
fi
$FOYER run --config "$D/Caddyfile" --adapter caddyfile > "$D/server.log" 2>&1 &
SPID=$!; echo $SPID > "$D/server.pid"
trap 'kill $SPID 2>/dev/null; [ -n "${PPID2:-}" ] && kill $PPID2 2>/dev/null' EXIT
for i in $(seq 1 50); do curl -s -o /dev/null $B/_waiting-room/draw && break; sleep 0.2; done
curl -s $B/_waiting-room/draw > "$D/draw_before.json"
N=0
join() {  # join one new fan; record its draw_index (or state)
  local f=f$N; N=$((N+1))
  curl -s -H 'Accept: application/json' -c "$D/jars/$f" -b "$D/jars/$f" $B/ > "$D/jars/$f.join"
  echo "$f $(date -u +%H:%M:%S) $(cat "$D/jars/$f.join")" >> "$D/joins.log"
}
poll_loop() {  # every 2 s, every even-numbered fan polls its status (claims when admitted)
  for it in $(seq 1 90); do
    for j in "$D"/jars/f*[02468]; do
      [ -f "$j" ] || continue
      curl -s -H 'Accept: application/json' -c "$j" -b "$j" $B/_waiting-room/status > "$j.status"
      echo "$(basename $j) $it $(cat $j.status)" >> "$D/polls.log"
    done
    sleep 2
  done
}
if [ "$PRE" = 1 ]; then
  sleep 7
  for i in $(seq 1 24); do join; done          # pre-queue registrants: order keys 0..23
  sleep 24                                      # to event_start (+30 s)
fi
poll_loop & PPID2=$!
for w in $(seq 1 6); do for i in 1 2 3 4; do join; done; sleep 4; done   # waves while the line moves
sleep 25                                        # the line drains
join; sleep 4; join; sleep 4                     # arrivals when nobody waits: let in on the spot
$FOYER waiting-room pause blindtest $ADMIN
for i in 1 2 3; do join; done                    # join during the pause: never drawn
sleep 2
$FOYER waiting-room sold-out blindtest $ADMIN
sleep 6
curl -s $B/_waiting-room/draw > "$D/draw_soldout.json"
curl -s -H 'Accept: application/json' $B/_waiting-room/fairness > "$D/report_soldout.json"
$FOYER waiting-room set blindtest event_end=$(date -u -d @$(( $(date +%s) + 3 )) +%Y-%m-%dT%H:%M:%SZ) $ADMIN
sleep 9
curl -s $B/_waiting-room/draw > "$D/draw.json"
curl -s -H 'Accept: application/json' $B/_waiting-room/fairness > "$D/report.json"
kill $PPID2 2>/dev/null; wait $PPID2 2>/dev/null
kill $SPID; wait $SPID 2>/dev/null
echo "server $SPID stopped; $N fans"
