#!/usr/bin/env bash
# services.sh makes sure the servers the integration tests talk to are answering on
# loopback: Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432 (trust auth,
# database "test"). It starts what is installed but stopped, and says clearly what
# is missing. It never installs a database server: that is the machine's job.
set -u

missing=0

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }

if ! command -v redis-server >/dev/null 2>&1; then
	echo "services: redis-server is not installed (apt-get install -y redis-server)" >&2
	missing=1
elif ! redis_up; then
	echo "services: starting redis-server on 127.0.0.1:6379" >&2
	redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
	for _ in $(seq 1 50); do redis_up && break; sleep 0.1; done
	redis_up || { echo "services: redis-server did not answer on 127.0.0.1:6379" >&2; missing=1; }
fi

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
	echo "services: PostgreSQL is not installed (apt-get install -y postgresql)" >&2
	missing=1
elif ! pg_up; then
	echo "services: starting PostgreSQL on 127.0.0.1:5432" >&2
	pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start >&2
	for _ in $(seq 1 100); do pg_up && break; sleep 0.1; done
	pg_up || { echo "services: PostgreSQL did not answer on 127.0.0.1:5432" >&2; missing=1; }
fi

if [ "$missing" -ne 0 ]; then
	if [ "${CI:-}" = "true" ]; then
		echo "services: integration tests cannot run without the servers above" >&2
		exit 1
	fi
	echo "services: integration tests that need the servers above will SKIP (set CI=true to fail instead)" >&2
fi
exit 0
