-- AddCodes: a batch of access codes, all or none (waitingroom.CodeKeeper);
-- the same rules as memstore's codes.go.
-- KEYS: the room's codes hash (id -> "<max uses>,<lane>"), then its uses
-- hash (id -> uses), both apart from the room's line.
-- ARGV: ttl (ms), then id and record pairs.
-- Returns 1, or 0 when a code is stored already (nothing is stored).
local codes, uses = KEYS[1], KEYS[2]
local ttl = ARGV[1]
for i = 2, #ARGV, 2 do
	if redis.call('HEXISTS', codes, ARGV[i]) == 1 then
		return 0
	end
end
for i = 2, #ARGV, 2 do
	redis.call('HSET', codes, ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', codes, ttl)
if redis.call('EXISTS', uses) == 1 then
	redis.call('PEXPIRE', uses, ttl)
end
return 1
