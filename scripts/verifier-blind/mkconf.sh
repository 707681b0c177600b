#!/bin/bash
# mkconf.sh <prequeue offset s> <event_start offset s> <event_end offset s> <rate/min> <out>
set -eu
now=$(date -u +%s)
t() { date -u -d "@$((now + $1))" +%Y-%m-%dT%H:%M:%SZ; }
cat > "$5" <<CONF
{
	admin 127.0.0.1:18419
	storage file_system /tmp/verifier-blind-caddy
	auto_https off
}
http://127.0.0.1:18480 {
	waiting_room {
		room                 blindtest
		new_users_per_minute $4
		total_active_users   1000
		queueing_method      random
		prequeue_start       $(t $1)
		event_start          $(t $2)
		event_end            $(t $3)
		shuffle_at_event_start
		admission_grace      5s
	}
	respond "origin ok" 200
}
CONF
