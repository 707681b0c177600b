-- PhaseSeed: the first seed stored for a phase wins, with the time it was
-- committed (see waitingroom/phasedraw.go).
-- ARGV: phase, candidate, now (µs)
-- Returns {seed, committed at}; nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local sf, af = 'ps:' .. ARGV[1], 'psat:' .. ARGV[1]
local m = redis.call('HMGET', meta, sf, af)
if m[1] and m[1] ~= '' then
	return m
end
redis.call('HSET', meta, sf, ARGV[2], af, ARGV[3])
return {ARGV[2], ARGV[3]}
