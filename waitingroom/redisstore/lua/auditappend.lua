-- AuditAppend: adds an entry at the end of the room's audit trail, numbered
-- one after the last ("<seq> <json>"), keeps the newest ARGV[3], and lets the
-- trail expire with the room (each controller step keeps every key alive).
-- ARGV: entry JSON, ttl (ms), most entries kept
-- Returns the entry's number, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local seq = 1
local last = redis.call('LINDEX', audit, -1)
if last then
	seq = tonumber(string.match(last, '^(%d+) ')) + 1
end
redis.call('RPUSH', audit, int(seq) .. ' ' .. ARGV[1])
redis.call('LTRIM', audit, -tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', audit, ARGV[2])
return seq
