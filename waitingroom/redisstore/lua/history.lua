-- History: the room's public history, entries from ARGV[1] (0-based), at most
-- ARGV[2] of them. Returns the raw entries, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local from, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
return redis.call('LRANGE', history, from, from + limit - 1)
