-- Told: adds marks of what the holders of places were told of their chance,
-- and of their being let in (waitingroom.Beats.Told). A lane's places have a
-- bitmap of their own, four bits a place, place n's at bit 4n on (its marks'
-- value read as a nibble, the highest first), so the whole tally is a read of
-- each bitmap. A mark only ever adds: one BITFIELD per lane sets its bits.
-- KEYS after the room's: the lanes' bitmaps the call touches.
-- ARGV: the keys' time to live (ms), then three per place: the index (from
-- 1) of its lane's bitmap among those keys, the place's number in its lane,
-- and its marks (1 to 15).
-- Returns 1, or nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local ops = {}
for i = 2, #ARGV, 3 do
	local k, n, m = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
	local o = ops[k]
	if not o then
		o = {}
		ops[k] = o
	end
	for b = 0, 3 do
		if bit.band(m, bit.lshift(1, b)) ~= 0 then
			o[#o + 1], o[#o + 2], o[#o + 3], o[#o + 4] = 'SET', 'u1', int(4 * n + 3 - b), 1
		end
	end
end
for k, o in pairs(ops) do
	redis.call('BITFIELD', KEYS[ROOM_KEYS + k], unpack(o))
	redis.call('PEXPIRE', KEYS[ROOM_KEYS + k], ARGV[1])
end
return 1
