-- Join: hand out the next order keys, one per visitor, in order, and admit on
-- the spot those who may be: while the room is open, nobody waits ahead, a
-- visitor's worth of rate budget is banked and a slot is free.
-- ARGV: now, open (0/1), cap, session, retention (µs), ttl (ms), visitor...
-- Returns {key, admitted (0/1), session end} for each visitor, flattened, -1
-- while the room settles after a loss, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false -- never re-create a lost room: its keys would restart from 0
end
local now = tonumber(ARGV[1])
-- A room re-created after a loss holds newcomers, keys and all, while the
-- line re-announces itself (see init.lua).
if now < num(redis.call('HGET', meta, 'settle')) then
	return -1
end
local visitors = {}
for i = 7, #ARGV do
	visitors[#visitors + 1] = ARGV[i]
end
return join_visitors(now, ARGV[2] == '1', tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], visitors)
