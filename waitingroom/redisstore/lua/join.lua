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
local n = #ARGV - 6
local first = redis.call('HINCRBY', meta, 'seq', n) - n
local out = {}
local admitted = 0
if ARGV[2] == '1' then
	local m = redis.call('HMGET', meta, 'serving', 'credit', 'pending')
	local credit = num(m[2])
	-- Ended sessions are swept only when a slot could matter: fans who will
	-- wait anyway (the common case in a crowd) cost no sorted-set work.
	if first == num(m[1]) and credit >= 1 then
		expire_sessions(now)
		local slots = free(tonumber(ARGV[3]), num(m[3]))
		while admitted < n and credit >= 1 and slots > 0 do
			local exp = open_session(ARGV[7 + admitted], now, tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
			out[#out + 1] = first + admitted
			out[#out + 1] = 1
			out[#out + 1] = exp
			admitted = admitted + 1
			credit = credit - 1
			slots = slots - 1
		end
		if admitted > 0 then
			record_admission(first, admitted, now)
			redis.call('PEXPIRE', history, ARGV[6])
			redis.call('HINCRBY', meta, 'serving', admitted)
			redis.call('HINCRBY', meta, 'admitted', admitted)
			redis.call('HSET', meta, 'credit', float(credit))
		end
	end
end
for i = admitted, n - 1 do
	out[#out + 1] = first + i
	out[#out + 1] = 0
	out[#out + 1] = 0
end
return out
