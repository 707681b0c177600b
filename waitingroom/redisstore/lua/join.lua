-- Join: hand out the next order keys, one per visitor, in order, and admit on
-- the spot those who may be: while the room is open, nobody waits ahead, a
-- visitor's worth of rate budget is banked and a slot is free.
-- ARGV: now, open (0/1), cap, session, retention (µs), ttl (ms), the number
-- of visitors, the visitors packed as "<length>:<visitor>" one after the other
-- (one argument, not one per visitor: the visitors are read only when
-- admitted, and a crowd is mostly told to wait).
-- Returns {first key, admitted, session end} (see join_visitors in lib.lua),
-- -1 while the room settles after a loss, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false -- never re-create a lost room: its keys would restart from 0
end
local now = tonumber(ARGV[1])
-- A room re-created after a loss holds newcomers, keys and all, while the
-- line re-announces itself (see init.lua).
if now < num(redis.call('HGET', meta, 'settle')) then
	return -1
end
local packed, pos = ARGV[8], 1
-- Visitors are asked for in order, from the first, so the reading goes on
-- where the last one ended.
local function visitor()
	local colon = string.find(packed, ':', pos, true)
	local len = tonumber(string.sub(packed, pos, colon - 1))
	local v = string.sub(packed, colon + 1, colon + len)
	pos = colon + len + 1
	return v
end
local first, admitted, exp = join_visitors(now, ARGV[2] == '1', tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]), visitor)
return {first, admitted, exp}
