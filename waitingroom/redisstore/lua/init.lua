-- Init: create the room, or raise its counters to at least the seed's.
-- ARGV: seq, serving, admitted, claimed, abandoned, held, held until,
-- draw closed (0/1), draw size, ttl (ms), incarnation, epochs
-- ("start:size:number,..."), then the admission batches still in their grace
-- window, each "start:count:claimed:at"
local counters = {'seq', 'serving', 'admitted', 'claimed', 'abandoned'}
local ttl = ARGV[10]

if redis.call('EXISTS', meta) == 1 then
	local cur = redis.call('HMGET', meta, unpack(counters))
	for i, field in ipairs(counters) do
		if tonumber(ARGV[i]) > num(cur[i]) then
			redis.call('HSET', meta, field, ARGV[i])
		end
	end
	return 0
end

-- A new incarnation: whatever an earlier one left behind (a key that outlived
-- the counters) must not leak into it.
redis.call('DEL', live, finished, batches, returners, revoked, revokedexp)
redis.call('HSET', meta,
	'seq', ARGV[1], 'serving', ARGV[2], 'admitted', ARGV[3],
	'claimed', ARGV[4], 'abandoned', ARGV[5],
	'credit', '1', -- a new room lets its first visitor straight in
	'tick', '0', 'pending', '0',
	'drawn', ARGV[8], 'drawsize', ARGV[9],
	'revcur', '0', 'ver', '0', 'inc', ARGV[11], 'epochs', ARGV[12])
redis.call('PEXPIRE', meta, ttl)

-- Sessions live before the store lost its data keep their slots until they
-- would have ended; their passes are out there.
local held, until_ = tonumber(ARGV[6]), ARGV[7]
for i = 0, held - 1 do
	redis.call('ZADD', live, until_, 'held:' .. i)
end
if held > 0 then
	redis.call('PEXPIRE', live, ttl)
end

redis.call('HSET', meta, 'heldleft', int(held))

-- Admissions still in their grace come back, restored: their places are among
-- the held slots, and a claim from one takes a held slot over.
for i = 13, #ARGV do
	local start, count, claimed, at = parse_batch(ARGV[i])
	redis.call('ZADD', batches, int(start), batch(start, count, claimed, at, true))
end
if #ARGV >= 13 then
	redis.call('PEXPIRE', batches, ttl)
end
return 1
