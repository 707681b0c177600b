-- SaveOverrides: compare-and-swap on the overrides' version.
-- ARGV: data, expected version
-- Returns the new version, -1 on a conflict, nil when the room is unknown.
local ver = redis.call('HGET', meta, 'ver')
if not ver then
	return false
end
if ver ~= ARGV[2] then
	return -1
end
redis.call('HSET', meta, 'ovr', ARGV[1])
return redis.call('HINCRBY', meta, 'ver', 1)
