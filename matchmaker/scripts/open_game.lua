-- open_game.lua: count a game among a player's unfinished games, unless the player already
-- sits in as many as it may.
--
-- KEYS[1]  the player's games   wg:player:{id}:games   (sorted set: game id -> since, ms)
--
-- ARGV[1]  game id
-- ARGV[2]  now (ms)
-- ARGV[3]  most unfinished games (0: no limit)
-- ARGV[4]  TTL (s) of the set (the player's long TTL)
--
-- Returns {1, count} when counted (or counted before), {0, count} at the limit.

local count = redis.call("ZCARD", KEYS[1])
if redis.call("ZSCORE", KEYS[1], ARGV[1]) then
  return {1, count}
end
local most = tonumber(ARGV[3])
if most > 0 and count >= most then
  return {0, count}
end
redis.call("ZADD", KEYS[1], ARGV[2], ARGV[1])
redis.call("EXPIRE", KEYS[1], ARGV[4])
return {1, count + 1}
