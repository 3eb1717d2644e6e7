-- notice.lua: add a notice to a game's stream that changes no version (a rematch offered).
--
-- The notice follows the update of the version given (entry id <version>-<n>, n >= 1),
-- lives as long as the game, and is announced on the game's shard channel like a commit
-- (it wakes the replicas that have watchers of the game).
--
-- KEYS[1]  game hash    wg:game:{id}
-- KEYS[2]  stream       wg:game:{id}:stream   (also the name of its shard channel)
--
-- ARGV[1]  the version the notice follows
-- ARGV[2]  stream max length (approximate trimming)
-- ARGV[3 ..]  the notice's field/value pairs
--
-- Returns the notice's entry id, or "" when the game has expired (nothing is added).

local lifetime = redis.call("PTTL", KEYS[1])
if lifetime == -2 then
  return ""
end
-- After the update of the version (or a notice of it), n is one more; when that update is
-- gone (a finished game's updates expire long before its record) n is 1 all the same, for
-- <version>-0 would read as the update itself.
local after = ARGV[1] .. "-*"
local last = redis.call("XREVRANGE", KEYS[2], "+", "-", "COUNT", 1)
if #last == 0 or tonumber(string.match(last[1][1], "^(%d+)")) < tonumber(ARGV[1]) then
  after = ARGV[1] .. "-1"
end
local id = redis.call("XADD", KEYS[2], "MAXLEN", "~", ARGV[2], after, unpack(ARGV, 3, #ARGV))
if lifetime >= 0 then  -- -1: the game has no TTL; 0: it expires in this very millisecond
  redis.call("PEXPIRE", KEYS[2], lifetime)
end
redis.call("SPUBLISH", KEYS[2], ARGV[1])
return id
