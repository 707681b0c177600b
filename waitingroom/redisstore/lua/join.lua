-- Join: hand out the next order keys, one per visitor, in order, and admit on
-- the spot those who may be: while the room is open, nobody waits ahead, a
-- visitor's worth of rate budget is banked and a slot is free.
-- ARGV: now, open (0/1), cap, session, retention (µs), ttl (ms), the number
-- of visitors, the visitors packed as "<length>:<visitor>" one after the other
-- (one argument, not one per visitor: the visitors are read only when
-- admitted, and a crowd is mostly told to wait), join_limit's interval (µs,
-- 0: none) and burst, and what each visitor is weighed by (see weigh in
-- lib.lua): "" for nobody, else "<network>,<seed>,<seed until>;" for each in
-- turn, network and seed being indices into KEYS (0: none), the lanes (see
-- below), and the phase pre-queue open (see settle_phases in lib.lua).
-- Returns {first key, admitted, session end} (see join_visitors in lib.lua),
-- and when visitors were weighed a fourth element, the refused among them as
-- {index (from 0), refusal, wait (µs)} one after the other: they have no
-- key, and the others' keys run on from the first in order. -1 while the room
-- settles after a loss, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false -- never re-create a lost room: its keys would restart from 0
end
local now = tonumber(ARGV[1])
-- A room re-created after a loss holds newcomers, keys and all, while the
-- line re-announces itself (see init.lua).
if now < num(redis.call('HGET', meta, 'settle')) then
	return -1
end
-- An open phase pre-queue holds its fans, these among them: nobody is
-- admitted on the spot.
local join_open = settle_phases(now, ARGV[13] or '') == nil and ARGV[2] == '1'
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
local checks = ARGV[11]
if ARGV[12] ~= '' then
	-- Joiners in priority lanes (ARGV[12]: each joiner's lane number, ","
	-- between them, plus MAX_LANES for a lane whose weight in force is 0;
	-- see join_lane in lib.lua): one at a time, in order, each
	-- weighed first. The reply's fifth element is, for each placed joiner,
	-- its place and whether it was admitted.
	local open, cap, session, retention, ttl = join_open, tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
	local interval, burst = tonumber(ARGV[9]), tonumber(ARGV[10])
	local lanes = {}
	for l in string.gmatch(ARGV[12], '(%d+)') do
		lanes[#lanes + 1] = tonumber(l)
	end
	local weighs = string.gmatch(checks, '(%d+),(%d+),(%d+);')
	local out, refused, exp = {}, {}, 0
	for i = 0, tonumber(ARGV[7]) - 1 do
		local v = visitor()
		local why, wait = 0, 0
		if checks ~= '' then
			local lk, sk, till = weighs()
			why, wait = weigh(now, KEYS[tonumber(lk)], KEYS[tonumber(sk)], tonumber(till), interval, burst)
		end
		if why ~= 0 then
			refused[#refused + 1] = i
			refused[#refused + 1] = why
			refused[#refused + 1] = wait
		else
			local key, admitted, e
			-- A lane number of MAX_LANES or more is that lane's less
			-- MAX_LANES, whose weight in force is 0: its joiner waits.
			local lane, lopen = lanes[i + 1], open
			if lane >= MAX_LANES then
				lane, lopen = lane - MAX_LANES, false
			end
			if lane == 0 then
				key, admitted, e = join_visitors(now, lopen, cap, session, retention, ttl, 1, function() return v end)
			else
				key, admitted, e = join_lane(now, lopen, cap, session, retention, ttl, lane, v)
			end
			if admitted > 0 then
				exp = e
			end
			out[#out + 1] = key
			out[#out + 1] = admitted
		end
	end
	return {0, 0, exp, refused, out}
end
if checks == '' then
	local first, admitted, exp = join_visitors(now, join_open, tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]), visitor)
	return {first, admitted, exp}
end
local interval, burst = tonumber(ARGV[9]), tonumber(ARGV[10])
local placed, refused, i = {}, {}, 0
for lk, sk, till in string.gmatch(checks, '(%d+),(%d+),(%d+);') do
	local v = visitor()
	lk, sk = KEYS[tonumber(lk)], KEYS[tonumber(sk)] -- KEYS[0]: nil
	local why, wait = weigh(now, lk, sk, tonumber(till), interval, burst)
	if why == 0 then
		placed[#placed + 1] = v
	else
		refused[#refused + 1] = i
		refused[#refused + 1] = why
		refused[#refused + 1] = wait
	end
	i = i + 1
end
local first, admitted, exp = join_visitors(now, join_open, tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], #placed, function(k) return placed[k + 1] end)
return {first, admitted, exp, refused}
