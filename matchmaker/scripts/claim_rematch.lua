-- claim_rematch.lua: record the rematch of a finished game, unless one is recorded already.
--
-- KEYS[1]  game hash    wg:game:{id}
--
-- ARGV[1]  the id of the rematch game just created
--
-- Returns the game's rematch: ARGV[1] if recorded now, the one recorded before otherwise,
-- "" if the game has expired.

local current = redis.call("HGET", KEYS[1], "rematch")
if current and current ~= "" then
  return current
end
if redis.call("EXISTS", KEYS[1]) == 0 then
  return ""
end
redis.call("HSET", KEYS[1], "rematch", ARGV[1])
return ARGV[1]
