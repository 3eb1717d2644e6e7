-- chat.lua: add a line to a game's chat and announce it to the game's watchers.
--
-- The chat lives in the game hash (field `chat`, a JSON list of [side, name, text, at ms],
-- the newest ARGV[4] kept), so it lives and expires with the game and its record; the line
-- also goes to the game's stream like a notice (entry id <version>-<n>, after the update of
-- the current version) and is announced on the game's shard channel, which wakes the
-- replicas that have watchers of the game. No version changes.
--
-- KEYS[1]  game hash    wg:game:{id}
-- KEYS[2]  stream       wg:game:{id}:stream   (also the name of its shard channel)
--
-- ARGV[1]  the speaker's side
-- ARGV[2]  the speaker's display name
-- ARGV[3]  the text
-- ARGV[4]  lines kept
-- ARGV[5]  stream max length (approximate trimming)
--
-- Returns {stream entry id, at (ms)}, or {"", 0} when the game has expired (nothing added).

local lifetime = redis.call("PTTL", KEYS[1])
if lifetime == -2 then
  return {"", 0}
end
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lines = cjson.decode(redis.call("HGET", KEYS[1], "chat") or "[]")
table.insert(lines, {ARGV[1], ARGV[2], ARGV[3], tostring(now)})
local keep = tonumber(ARGV[4])
while #lines > keep do
  table.remove(lines, 1)
end
redis.call("HSET", KEYS[1], "chat", cjson.encode(lines))

local version = redis.call("HGET", KEYS[1], "version") or "0"
local after = version .. "-*"
local last = redis.call("XREVRANGE", KEYS[2], "+", "-", "COUNT", 1)
if #last == 0 or tonumber(string.match(last[1][1], "^(%d+)")) < tonumber(version) then
  after = version .. "-1"
end
local id = redis.call(
  "XADD", KEYS[2], "MAXLEN", "~", ARGV[5], after,
  "n", "CHAT", "s", ARGV[1], "m", ARGV[2], "t", ARGV[3], "a", tostring(now)
)
if lifetime >= 0 then  -- -1: the game has no TTL; 0: it expires in this very millisecond
  redis.call("PEXPIRE", KEYS[2], lifetime)
end
redis.call("SPUBLISH", KEYS[2], version)
return {id, now}
