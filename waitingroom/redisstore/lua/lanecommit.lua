-- CommitLanes: the first time a phase's lane commitment is stored wins.
-- ARGV: "<phase>:<commitment>", now (µs)
-- Returns the time stored; nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local field = 'lc:' .. ARGV[1]
redis.call('HSETNX', meta, field, ARGV[2])
return redis.call('HGET', meta, field)
