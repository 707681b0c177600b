-- Join: hand out the next order key and, when the room is open, nobody waits,
-- a visitor's worth of rate budget is banked and a slot is free, admit the
-- visitor on the spot.
-- ARGV: now, visitor, open (0/1), cap, session, retention (µs), ttl (ms)
-- Returns {key, admitted (0/1), session end}, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false -- never re-create a lost room: its keys would restart from 0
end
local now = tonumber(ARGV[1])
expire_sessions(now)
local key = redis.call('HINCRBY', meta, 'seq', 1) - 1
if ARGV[3] == '1' then
	local m = redis.call('HMGET', meta, 'serving', 'credit', 'pending')
	local credit = num(m[2])
	if key == num(m[1]) and credit >= 1 and free(tonumber(ARGV[4]), num(m[3])) > 0 then
		redis.call('HINCRBY', meta, 'serving', 1)
		redis.call('HINCRBY', meta, 'admitted', 1)
		redis.call('HSET', meta, 'credit', float(credit - 1))
		local exp = open_session(ARGV[2], now, tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7])
		return {key, 1, exp}
	end
end
return {key, 0, 0}
