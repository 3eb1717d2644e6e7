-- commit.lua: commit one change of a game, only if the game is still at the expected version.
--
-- Every change of a session goes through this script (creation, a seat taken, actions,
-- endings), so "read, ask the engine, write if unchanged" is one compare-and-set. The
-- update appended to the stream is announced on the game's shard channel (named like the
-- stream), which wakes the replicas that have watchers of the game.
--
-- KEYS[1]  game hash             wg:game:{id}
-- KEYS[2]  actions list          wg:game:{id}:actions
-- KEYS[3]  update stream         wg:game:{id}:stream  (also the name of its shard channel)
-- KEYS[4]  idempotency record    wg:game:{id}:idem:<player>:<key digest>
-- KEYS[5]  due index, when on this node (a standalone Redis, or the game's own slot:
--          `keys.game_due`): the game's due time is lowered to ARGV[8] in the script
--
-- ARGV[1]  expected version; 0 means the game must not exist yet (creation)
-- ARGV[2]  request fingerprint; "" = no idempotency record
-- ARGV[3]  idempotency record TTL (s)
-- ARGV[4]  stream max length (approximate trimming)
-- ARGV[5]  keep only the updates of this many newest versions after this commit, with the
--          notices between them (0 = all; a game that ends keeps its last few: its record
--          holds the whole game)
-- ARGV[6]  TTL (s) of the game's keys after this commit (0 = leave as is)
-- ARGV[7]  TTL (s) of the update stream instead, when shorter (0 = the same): a game that
--          ends keeps its updates only as long as a retried submission may ask for one
-- ARGV[8]  the game's due time (ms) to lower KEYS[5] to; "" = none (no KEYS[5])
-- ARGV[9]  keep only the first this many entries of the actions list ("" = all): a
--          takeback's cut, made before anything is appended
-- ARGV[10] N, the number of action entries that follow
-- ARGV[11 .. 10+N]             action entries to append to the actions list
-- ARGV[11+N]                   M, the number of stream field/value pairs that follow
-- ARGV[12+N .. 11+N+2M]        stream entry fields and values
-- ARGV[12+N+2M ..]             game hash fields and values to set
--
-- Returns {"ok", new version}, {"conflict", current version} or
-- {"duplicate", stored record "<fingerprint>|<version>"}.

-- Lowering a due time is never wrong (a sweeper that looks early finds nothing to do), so
-- it is lowered whatever the commit's outcome, as when it is sent apart.
if ARGV[8] ~= "" then
  redis.call("ZADD", KEYS[5], "LT", ARGV[8], string.match(KEYS[1], "{(.*)}"))
end

local fingerprint = ARGV[2]
if fingerprint ~= "" then
  local prior = redis.call("GET", KEYS[4])
  if prior then
    -- A write, so that a WAIT after this script on its connection also covers the first
    -- commit: a retry that follows an unconfirmed commit is confirmed like it.
    redis.call("EXPIRE", KEYS[4], ARGV[3])
    return {"duplicate", prior}
  end
end

local current = tonumber(redis.call("HGET", KEYS[1], "version") or "0")
local expected = tonumber(ARGV[1])
if current ~= expected then
  return {"conflict", tostring(current)}
end
local version = current + 1

if ARGV[9] ~= "" then
  local keep_actions = tonumber(ARGV[9])
  if keep_actions > 0 then
    redis.call("LTRIM", KEYS[2], 0, keep_actions - 1)
  else
    redis.call("DEL", KEYS[2])
  end
end

local n = tonumber(ARGV[10])
local i = 11
if n > 0 then
  redis.call("RPUSH", KEYS[2], unpack(ARGV, i, i + n - 1))
end
i = i + n

local m = tonumber(ARGV[i])
i = i + 1
if m > 0 then
  redis.call("XADD", KEYS[3], "MAXLEN", "~", ARGV[4], version .. "-0", unpack(ARGV, i, i + 2 * m - 1))
  redis.call("SPUBLISH", KEYS[3], version)
end
i = i + 2 * m

if #ARGV >= i then
  redis.call("HSET", KEYS[1], "version", version, unpack(ARGV, i, #ARGV))
else
  redis.call("HSET", KEYS[1], "version", version)
end

local keep = tonumber(ARGV[5])
local from = version - keep + 1  -- the oldest version kept (entry ids are <version>-<seq>)
if keep > 0 and from > 1 then
  local oldest = redis.call("XRANGE", KEYS[3], "-", "+", "COUNT", 1)
  if #oldest > 0 and tonumber(string.match(oldest[1][1], "^(%d+)")) < from then
    -- Keep the updates of the last `keep` versions with the notices between them (notices
    -- must not crowd updates out). XTRIM would only flag the old entries deleted inside
    -- their listpack node and free nothing: rebuild the stream instead (once, as a game ends).
    local tail = redis.call("XRANGE", KEYS[3], from .. "-0", "+")
    redis.call("DEL", KEYS[3])
    for j = 1, #tail do
      redis.call("XADD", KEYS[3], tail[j][1], unpack(tail[j][2]))
    end
  end
end

local ttl = tonumber(ARGV[6])
if ttl > 0 then
  redis.call("EXPIRE", KEYS[1], ttl)
  redis.call("EXPIRE", KEYS[2], ttl)
  local stream_ttl = tonumber(ARGV[7])
  if stream_ttl > 0 and stream_ttl < ttl then
    ttl = stream_ttl
  end
  redis.call("EXPIRE", KEYS[3], ttl)
end

if fingerprint ~= "" then
  redis.call("SET", KEYS[4], fingerprint .. "|" .. version, "EX", ARGV[3])
end
return {"ok", tostring(version)}
