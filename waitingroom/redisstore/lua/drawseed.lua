-- DrawSeed: the first seed stored wins, with the time it was committed.
-- ARGV: candidate, now (µs)
-- Returns {seed, committed at}; nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local m = redis.call('HMGET', meta, 'seed', 'seedat')
if m[1] and m[1] ~= '' then
	return m
end
redis.call('HSET', meta, 'seed', ARGV[1], 'seedat', ARGV[2])
return {ARGV[1], ARGV[2]}
