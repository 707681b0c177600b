-- Audit: entries of the room's audit trail numbered above ARGV[1], at most
-- ARGV[2] of them. Entries are numbered without gaps, so the first wanted is
-- found from the number of the first kept. Returns the raw entries, or nil
-- when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local first = redis.call('LINDEX', audit, 0)
if not first then
	return {}
end
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local from = math.max(0, after - tonumber(string.match(first, '^(%d+) ')) + 1)
return redis.call('LRANGE', audit, from, from + limit - 1)
