-- load.lua: read a game, its idempotency record and the time, in one step.
--
-- KEYS[1]  game hash             wg:game:{id}
-- KEYS[2]  idempotency record    wg:game:{id}:idem:<player>:<key digest> (a name never set
--                                when the caller has no key)
--
-- ARGV[1] .. ARGV[n]   the game hash fields to read
--
-- Returns {seconds, microseconds, the idempotency record or false, {field values}}. The
-- time is the clock of the game's own node, so everyone who reads one game agrees on its
-- clocks (and a Redis Cluster needs no TIME sent to another node).

local t = redis.call("TIME")
return {t[1], t[2], redis.call("GET", KEYS[2]), redis.call("HMGET", KEYS[1], unpack(ARGV))}
