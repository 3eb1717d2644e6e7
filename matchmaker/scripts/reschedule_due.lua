-- reschedule_due.lua: after a sweeper's work, set when the game is next due, unless
-- someone scheduled it meanwhile.
--
-- Writers only ever lower a game's score (ZADD LT) before and after they commit, so a
-- score that still equals this sweeper's lease means nobody needs the game sooner.
--
-- KEYS[1]  due index shard    wg:{due:<n>}
--
-- ARGV[1]  game id
-- ARGV[2]  the lease score of this sweeper's claim (as last renewed)
-- ARGV[3]  the next due time (ms), or "" to drop the game from the index
--
-- Returns 1 when set (or dropped), 0 when the score had changed and was left alone.

local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if score and tonumber(score) ~= tonumber(ARGV[2]) then
  return 0
end
if ARGV[3] == "" then
  redis.call("ZREM", KEYS[1], ARGV[1])
else
  redis.call("ZADD", KEYS[1], tonumber(ARGV[3]), ARGV[1])
end
return 1
