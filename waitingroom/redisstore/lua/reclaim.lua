-- Reclaim: take over a session the store may have lost, known from its pass.
-- ARGV: now, visitor, ends (µs), cap, retention (µs), ttl (ms), open (0/1)
-- Returns {status, session end} as claim.lua; nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now, visitor, ends = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local cap, retention, ttl = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
expire_sessions(now)

local exp = redis.call('ZSCORE', live, visitor)
if exp then
	redis.call('ZADD', seen, int(now), visitor)
	return {0, tonumber(exp)}
end
if redis.call('ZSCORE', idled, visitor) then
	-- It idled out since the loss: its passes are about to be refused.
	return {1, 0}
end
local forget = redis.call('ZSCORE', finished, visitor)
if (forget and now < tonumber(forget)) or now >= ends then
	return {3, 0}
end
redis.call('ZREM', returners, visitor)
if not release_held() then
	-- No slot is held for it any more: back at the front, as an idled-out
	-- session comes back, within the rate and into a free slot.
	local status = let_returner_in(visitor, now, cap, num(redis.call('HGET', meta, 'pending')), ARGV[7] == '1', ttl)
	if status then
		return {status, 0}
	end
end
-- The pass's end: the same end gives the same pass id.
resume_session(visitor, ends, now, ttl)
redis.call('ZADD', finished, 'GT', int(ends + retention), visitor)
redis.call('PEXPIRE', finished, ttl)
return {0, ends}
