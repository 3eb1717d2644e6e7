-- queue_leave.lua: take a ticket out of its queue, unless it was matched already.
--
-- KEYS[1]  ratings   wg:queue:{q}:ratings   (sorted set: ticket -> rating)
-- KEYS[2]  joined    wg:queue:{q}:joined    (sorted set: ticket -> join time, ms)
-- KEYS[3]  alive     wg:queue:{q}:alive     (sorted set: ticket -> alive until, ms)
-- KEYS[4]  tickets   wg:queue:{q}:tickets   (hash: ticket -> JSON seat of the player)
-- KEYS[5]  matches   wg:queue:{q}:matches   (hash: ticket -> JSON match)
-- KEYS[6]  matched   wg:queue:{q}:matched   (sorted set: ticket -> match time, ms)
-- KEYS[7]  config    wg:queue:{q}:config    (string: JSON of the games to create)
-- KEYS[8]  arrivals  wg:queue:{q}:arrivals  (sorted set: ticket -> arrival number: the order)
-- KEYS[9]  sequence  wg:queue:{q}:sequence  (string: last arrival number given out)
--
-- ARGV[1]  ticket
-- ARGV[2]  the player leaving (only the ticket's own player may take it out)
--
-- Returns {"left"}, {"matched", match JSON} (the match stands) or {"gone"} (no such
-- ticket, or not this player's).

local match = redis.call("HGET", KEYS[5], ARGV[1])
if match then
  return {"matched", match}
end
local seat = redis.call("HGET", KEYS[4], ARGV[1])
if not seat or not string.find(seat, '"p":"' .. ARGV[2] .. '"', 1, true) then
  return {"gone"}
end
local removed = redis.call("ZREM", KEYS[2], ARGV[1])
redis.call("ZREM", KEYS[1], ARGV[1])
redis.call("ZREM", KEYS[3], ARGV[1])
redis.call("ZREM", KEYS[8], ARGV[1])
redis.call("HDEL", KEYS[4], ARGV[1])
if removed == 1 then
  return {"left"}
end
return {"gone"}
