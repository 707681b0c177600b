#!/bin/bash
# drive64.sh: a random room with many rolling draws (to see the draw endpoint's 64-epoch window)
set -u
D=run/many; rm -rf "$D"; mkdir -p "$D"
B=http://127.0.0.1:18480; FOYER=../../bin/foyer; ADMIN="--address 127.0.0.1:18419"
rm -rf /tmp/verifier-blind-caddy
./mkconf.sh 0 2 900 600 "$D/Caddyfile"
sed -i '/prequeue_start/d;/shuffle_at_event_start/d' "$D/Caddyfile"
$FOYER run --config "$D/Caddyfile" --adapter caddyfile > "$D/server.log" 2>&1 &
SPID=$!; trap 'kill $SPID 2>/dev/null' EXIT
for i in $(seq 1 50); do curl -s -o /dev/null $B/_waiting-room/draw && break; sleep 0.2; done
sleep 2
for w in $(seq 1 80); do
  for i in $(seq 1 14); do curl -s -o /dev/null -H 'Accept: application/json' $B/; done
  sleep 1
done
sleep 3
curl -s -i -X POST $B/_waiting-room/draw | head -8 > "$D/draw_post.txt"
curl -s -I $B/_waiting-room/draw > "$D/draw_head.txt"
$FOYER waiting-room sold-out blindtest $ADMIN > /dev/null
$FOYER waiting-room set blindtest event_end=$(date -u -d @$(( $(date +%s) + 3 )) +%Y-%m-%dT%H:%M:%SZ) $ADMIN > /dev/null
sleep 9
curl -s $B/_waiting-room/draw > "$D/draw.json"
curl -s -H 'Accept: application/json' $B/_waiting-room/fairness > "$D/report.json"
curl -s -i -H 'Accept: text/html' $B/_waiting-room/fairness | head -12 > "$D/fairness_html.txt"
kill $SPID; wait $SPID 2>/dev/null; echo "server $SPID stopped"
