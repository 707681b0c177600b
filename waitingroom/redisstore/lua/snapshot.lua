-- Snapshot: the room's state in one reply.
-- ARGV: now (µs), revocation cursor
-- Returns {seq, serving, admitted, claimed, abandoned, pending, credit, drawn,
-- draw size, version, active, returning, incarnation, epochs,
-- "forgotten:settle until:blank:lost at:margin from:margin to", "live from:young:skipped:idled out:returned:requeued", live
-- counts, live head, pace, supply samples (supply.lua), lanes ("" without lanes, else
-- "<weights text>|<credits>|<seq>:<serving>:<admitted>,..." for lanes 1 to 7),
-- the waitlist ("since:from:admitted:owed" while the line is one, else
-- "ended:<µs>" once it was, else ""),
-- the phase pre-queues (see settle_phases in lib.lua), number of batches, batch..., revocation...}, each batch
-- being a batches member (lib.lua) and each revocation "cursor:expiry:pass
-- id" (or "cursor:expiry:~idled at:visitor"); nil when the room is unknown.
if redis.call('EXISTS', meta) == 0 then
	return false
end
local now = tonumber(ARGV[1])
expire_sessions(now)
local out = redis.call('HMGET', meta,
	'seq', 'serving', 'admitted', 'claimed', 'abandoned',
	'pending', 'credit', 'drawn', 'drawsize', 'ver')
for i = 1, 10 do
	out[i] = out[i] or '0'
end
out[11] = redis.call('ZCARD', live)
out[12] = redis.call('ZCARD', returners)
out[13] = redis.call('HGET', meta, 'inc') or ''
out[14] = redis.call('HGET', meta, 'epochs') or ''
local bs = redis.call('ZRANGE', batches, 0, -1)
out[15] = (redis.call('HGET', meta, 'forgot') or '0') .. ':' ..
	(redis.call('HGET', meta, 'settle') or '0') .. ':' ..
	(redis.call('HGET', meta, 'blank') or '0') .. ':' ..
	(redis.call('HGET', meta, 'lostat') or '0') .. ':' ..
	(redis.call('HGET', meta, 'mfrom') or '0') .. ':' ..
	(redis.call('HGET', meta, 'mto') or '0')
local lv = redis.call('HMGET', meta, 'lvfrom', 'lvyoung', 'skipped', 'idledout', 'returned', 'requeued')
out[16] = (lv[1] or '0') .. ':' .. (lv[2] or '0') .. ':' .. (lv[3] or '0') .. ':' .. (lv[4] or '0') .. ':' ..
	(lv[5] or '0') .. ':' .. (lv[6] or '0')
-- The counts are kept at their blocks' offsets: from serving's block to the
-- end of what is counted.
local lvfrom, lvto = num(lv[1]), num(lv[2])
if lvto > lvfrom then
	out[17] = redis.call('GETRANGE', livecounts, 2 * math.floor(lvfrom / LIVE_BLOCK), 2 * math.ceil(lvto / LIVE_BLOCK) - 1)
else
	out[17] = ''
end
out[18] = redis.call('GET', livehead) or ''
out[19] = (redis.call('HGET', meta, 'pace_places') or '0') .. ':' ..
	(redis.call('HGET', meta, 'pace_secs') or '0') .. ':' ..
	(redis.call('HGET', meta, 'pace_moves') or '0') .. ':' ..
	(redis.call('HGET', meta, 'pace_still') or '0')
out[20] = redis.call('HGET', meta, 'supply') or ''
out[21] = ''
if redis.call('HEXISTS', meta, 'lwait') == 1 then
	local f = {'lspec', 'lcredit'}
	for i = 1, MAX_LANES - 1 do
		f[#f + 1] = lane_field(i, 'seq')
		f[#f + 1] = lane_field(i, 'serv')
		f[#f + 1] = lane_field(i, 'adm')
	end
	local l = redis.call('HMGET', meta, unpack(f))
	local parts = {}
	for i = 3, #l, 3 do
		parts[#parts + 1] = (l[i] or '0') .. ':' .. (l[i + 1] or '0') .. ':' .. (l[i + 2] or '0')
	end
	out[21] = (l[1] or '') .. '|' .. (l[2] or '') .. '|' .. table.concat(parts, ',')
end
out[22] = ''
if redis.call('HEXISTS', meta, 'wlsince') == 1 then
	local wl = redis.call('HMGET', meta, 'wlsince', 'wlfrom', 'wladm')
	local _, owed = waitlist_grants(now)
	out[22] = wl[1] .. ':' .. wl[2] .. ':' .. wl[3] .. ':' .. int(owed)
elseif redis.call('HEXISTS', meta, 'wlended') == 1 then
	out[22] = 'ended:' .. redis.call('HGET', meta, 'wlended')
end
out[23] = redis.call('HGET', meta, 'pq') or ''
out[24] = #bs
for _, m in ipairs(bs) do
	out[#out + 1] = m
end

local revs = redis.call('ZRANGEBYSCORE', revoked, '(' .. ARGV[2], '+inf')
for _, m in ipairs(revs) do
	local exp = tonumber(string.match(m, '^%d+:(%-?%d+):'))
	if exp > now then
		out[#out + 1] = m
	end
end
return out
