-- Requeue: a visitor whose session failed on the site's side goes back to the
-- front (Store.Requeue in store.go): the session ends, its slot freed and its
-- pass revoked as release.lua does, and the visitor waits first in line,
-- after those requeued before, as a returner. At most max requeues per
-- visitor, each remembered as "<n>:<visitor>" until forget, all of them as
-- long as the last.
-- ARGV: now (µs), visitor, pass id ('' when nothing is to be revoked), pass
-- expiry (µs), ttl (ms), max requeues, forget at (µs), the pass's end in seconds
-- Returns {status, count}: 0 requeued, 1 spent (count requeues made
-- already), 2 no live session; nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now, visitor, ttl, most = tonumber(ARGV[1]), ARGV[2], ARGV[5], tonumber(ARGV[6])
expire_sessions(now)
local ends = redis.call('ZSCORE', live, visitor)
if not ends or not pass_of(ends, ARGV[8]) then
	return {2, 0}
end
local n = 0
while n < most do
	local forget = redis.call('ZSCORE', requeues, int(n + 1) .. ':' .. visitor)
	if not forget or tonumber(forget) <= now then
		break
	end
	n = n + 1
end
if n >= most then
	return {1, n}
end
redis.call('ZREM', live, visitor)
redis.call('ZREM', seen, visitor)
if ARGV[3] ~= '' then
	local cursor = redis.call('HINCRBY', meta, 'revcur', 1)
	local member = int(cursor) .. ':' .. ARGV[4] .. ':' .. ARGV[3]
	redis.call('ZADD', revoked, int(cursor), member)
	redis.call('ZADD', revokedexp, ARGV[4], member)
	redis.call('PEXPIRE', revoked, ttl)
	redis.call('PEXPIRE', revokedexp, ttl)
end
-- Every requeue of the visitor is remembered as long as the last: the count
-- goes as one.
for k = 1, n + 1 do
	redis.call('ZADD', requeues, ARGV[7], int(k) .. ':' .. visitor)
end
redis.call('PEXPIRE', requeues, ttl)
local order = redis.call('HINCRBY', meta, 'requeued', 1)
redis.call('ZADD', requeued, order, visitor)
redis.call('PEXPIRE', requeued, ttl)
-- At the front from now on: a slot and a visitor's worth of budget are kept
-- for them while they ask again within the returner window.
redis.call('ZADD', returners, int(now), visitor)
redis.call('PEXPIRE', returners, ttl)
return {0, n + 1}
