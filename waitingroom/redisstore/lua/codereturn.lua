-- ReturnCodeUse: give back one use of a code (waitingroom.CodeKeeper), for a
-- fan whose place was not made after the use was counted; never below zero.
-- KEYS: the room's code uses hash (see codeadd.lua). ARGV: the code's ID.
if tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') > 0 then
	redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
end
return 1
