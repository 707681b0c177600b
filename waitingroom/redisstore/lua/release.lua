-- Release: end a visitor's session early and record the pass as revoked.
-- ARGV: visitor, pass id ('' when nothing is to be revoked), pass expiry (µs), ttl (ms)
if redis.call('EXISTS', meta) == 0 then
	return false
end
if redis.call('ZREM', live, ARGV[1]) == 0 and ARGV[1] ~= '' then
	-- A session the store lost: one of the held slots stood for it. (A
	-- revocation put back after a loss names no visitor: it ends nothing.)
	release_held()
end
redis.call('ZREM', seen, ARGV[1])
if ARGV[2] ~= '' then
	-- The cursor orders revocations for nodes that poll "what is new since";
	-- the second index trims them by expiry without a scan.
	local cursor = redis.call('HINCRBY', meta, 'revcur', 1)
	local member = int(cursor) .. ':' .. ARGV[3] .. ':' .. ARGV[2]
	redis.call('ZADD', revoked, int(cursor), member)
	redis.call('ZADD', revokedexp, ARGV[3], member)
	redis.call('PEXPIRE', revoked, ARGV[4])
	redis.call('PEXPIRE', revokedexp, ARGV[4])
end
return 1
