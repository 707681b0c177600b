-- Leave: a visitor gives up their place at once (they left the line); the
-- same rules as memstore's leave.go.
-- ARGV: now (µs), visitor, place, retention (µs), ttl (ms), heartbeat window
-- (µs, 0: places are not tracked)
-- Returns 1, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now, visitor, place = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local retention, ttl, win = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
expire_sessions(now)
local m = redis.call('HMGET', meta, 'serving', 'pending', 'seq')
local serving, pending, seq = num(m[1]), num(m[2]), num(m[3])
local forget = redis.call('ZSCORE', finished, visitor)
local had = forget and now < tonumber(forget)

if redis.call('ZREM', live, visitor) == 1 then
	-- Leaving in session ends it, as a revoke does: the slot frees.
	redis.call('ZREM', seen, visitor)
elseif not had and place < serving_of(place, serving) then
	-- Admitted and not yet claimed: the pending slot goes back. A ghost of
	-- the batch held none, and a visitor who had a session claimed theirs
	-- already.
	local b = redis.call('ZREVRANGEBYSCORE', batches, int(place), '-inf', 'LIMIT', 0, 1)
	local l = redis.call('ZREVRANGEBYSCORE', lapsed, int(place), '-inf', 'LIMIT', 0, 1)
	local ghost = false
	if #l > 0 then
		local start, count = parse_lapse(l[1])
		ghost = place < start + count
	end
	if #b > 0 and not ghost then
		local start, count, claimed, at, restored, span = parse_batch(b[1])
		if place < start + span and claimed < count then
			redis.call('ZADD', batches, int(start), batch(start, count, claimed + 1, at, restored, span))
			redis.call('ZREM', batches, b[1])
			if restored then
				release_held()
			else
				redis.call('HSET', meta, 'pending', int(pending - 1))
			end
		end
	end
end
if redis.call('ZREM', readmits, visitor) == 1 then
	-- A requeued visitor the controller let in again: their pending slot
	-- goes back, and the admission counts as lapsed (advance.lua).
	redis.call('HINCRBY', meta, 'pending', -1)
	redis.call('HINCRBY', meta, 'abandoned', 1)
end
redis.call('ZREM', returners, visitor)
redis.call('ZREM', requeued, visitor)
redis.call('ZREM', idled, visitor)
redis.call('ZREM', idledends, visitor)
-- The ticket is spent: a claim with it is Finished from now on.
redis.call('ZADD', finished, 'GT', int(now + retention), visitor)
redis.call('PEXPIRE', finished, ttl)

if place >= serving and place < seq then
	redis.call('ZADD', left, int(place), int(place))
	redis.call('PEXPIRE', left, ttl)
	-- What beats said of it no longer counts.
	if win > 0 then
		local blk = math.floor(place / BEAT_BLOCK)
		local off = place - blk * BEAT_BLOCK
		local cur = math.floor(now / win)
		for idx = cur - WINDOWS + 1, cur do
			local k = window_key(idx, blk)
			if off < 8 * redis.call('STRLEN', k) then
				redis.call('SETBIT', k, off, 0)
			end
		end
	end
end
return 1
