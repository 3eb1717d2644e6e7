-- presence.lua: who of a running game's players is there, and what follows when it changes.
--
-- A player is present while one of its WatchGame streams, on any replica, keeps a watcher
-- field of the presence hash in the future. A side that was present and is not any more
-- has left (DISCONNECTED); a side that left and is present again is back (RECONNECTED);
-- a side to act that has left is warned once (ABANDON_WARNING) that it loses as abandoned
-- at a deadline unless it comes back. Each change is a notice in the game's stream, after
-- the update of the version it follows (entry id <version>-<n>), announced on the game's
-- shard channel like a commit (it wakes the watchers' replicas), and the game hash keeps
-- who has left (`away`) and who is warned (`warned`), both JSON objects side -> ms.
--
-- KEYS[1]  game hash    wg:game:{id}
-- KEYS[2]  presence     wg:game:{id}:presence   (hash: <side>|<watch id> -> until, ms)
-- KEYS[3]  stream       wg:game:{id}:stream   (also the name of its shard channel)
--
-- ARGV[1]  the game's version the sides below were read at
-- ARGV[2]  abandon after (ms): the deadline of a warning given now
-- ARGV[3]  watcher field to add or renew ("" none)
-- ARGV[4]  watcher field to remove ("" none)
-- ARGV[5]  presence lifetime (ms): a watcher field lives this long unless renewed
-- ARGV[6]  stream max length (approximate trimming)
-- ARGV[7]  the human sides, comma-separated
-- ARGV[8]  the human sides to act, comma-separated
-- ARGV[9]  "1" while the calling replica is younger than a presence lifetime: a watcher
--          field that lapsed is kept and still counts, unless its side is there by another
--          (its stream may have been served by a replica that stopped, and its client has
--          not yet had a lifetime to come back: a restart is not a player leaving)
-- ARGV[10] until when (ms) the players seated as the game started count as there without
--          a stream ("" never): their clients are still opening their first ones. Not a
--          side whose stream ends in this call, nor one already known to have left.
-- ARGV[11] how long (ms) the presence hash is kept after a watcher field is added: as long
--          as a running game's keys, so that its lapsed fields outlive any restart
--
-- The watcher field changes whatever the game's state (but a finished game's presence hash
-- is dropped: kept as long as a running game's keys, it would outlive the game by weeks).
-- Returns {"closed"} when the game is not running, {"conflict"} when it is no longer at
-- ARGV[1] (read it and call again), else {"ok", away JSON, warned JSON}.

local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lifetime = tonumber(ARGV[5])
if ARGV[3] ~= "" then
  redis.call("HSET", KEYS[2], ARGV[3], now + lifetime)
  redis.call("PEXPIRE", KEYS[2], ARGV[11])
end
if ARGV[4] ~= "" then
  redis.call("HDEL", KEYS[2], ARGV[4])
end

local status = redis.call("HGET", KEYS[1], "status")
if status ~= "running" then
  if status ~= "open" then  -- finished, or gone: its presence is never read again
    redis.call("DEL", KEYS[2])
  end
  return {"closed"}
end
if redis.call("HGET", KEYS[1], "version") ~= ARGV[1] then
  return {"conflict"}
end

local here = {}
local watchers = redis.call("HGETALL", KEYS[2])
for i = 1, #watchers, 2 do
  local side = string.match(watchers[i], "^(.*)|")
  if side and tonumber(watchers[i + 1]) > now then here[side] = true end
end
for i = 1, #watchers, 2 do
  local side = string.match(watchers[i], "^(.*)|")
  if tonumber(watchers[i + 1]) <= now then
    if ARGV[9] == "1" and side and not here[side] then
      here[side] = "lapsed"  -- kept: its client may still be on its way back
    elseif here[side] ~= "lapsed" then
      redis.call("HDEL", KEYS[2], watchers[i])
    end
  end
end

local function decode(field)
  local raw = redis.call("HGET", KEYS[1], field)
  if not raw or raw == "" then return {} end
  return cjson.decode(raw)
end
local function encode(field, value)
  if next(value) == nil then
    redis.call("HDEL", KEYS[1], field)
  else
    redis.call("HSET", KEYS[1], field, cjson.encode(value))
  end
end
local to_act = {}
for side in string.gmatch(ARGV[8], "[^,]+") do to_act[side] = true end

local away = decode("away")
local warned = decode("warned")
if ARGV[10] ~= "" and now < tonumber(ARGV[10]) then
  local leaving = string.match(ARGV[4], "^(.*)|")
  local seen = {}
  for i = 1, #watchers, 2 do
    local side = string.match(watchers[i], "^(.*)|")
    if side then seen[side] = true end
  end
  for side in string.gmatch(ARGV[7], "[^,]+") do
    if not seen[side] and not away[side] and side ~= leaving then here[side] = true end
  end
end
local version = ARGV[1]
local noticed = false
local function notice(kind, side, deadline)
  redis.call("XADD", KEYS[3], "MAXLEN", "~", ARGV[6], version .. "-*",
    "n", kind, "s", side, "t", tostring(now), "d", tostring(deadline or 0))
  noticed = true
end

for side in string.gmatch(ARGV[7], "[^,]+") do
  if here[side] then
    if away[side] then
      away[side] = nil
      warned[side] = nil
      notice("RECONNECTED", side)
    end
  else
    if not away[side] then
      away[side] = now
      notice("DISCONNECTED", side)
    end
    if to_act[side] and not warned[side] then
      warned[side] = now + tonumber(ARGV[2])
      notice("ABANDON_WARNING", side, warned[side])
    end
  end
  if warned[side] and not to_act[side] then
    warned[side] = nil
  end
end
encode("away", away)
encode("warned", warned)
if noticed then
  redis.call("SPUBLISH", KEYS[3], version)
end
return {"ok", cjson.encode(away), cjson.encode(warned)}
