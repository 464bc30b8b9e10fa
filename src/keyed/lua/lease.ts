import { LANE_LIB } from "./lane-lib.js";

/**
 * Puts leased items back on the ready list, keeping their slot: either those whose lease expired
 * (their runner died or stalled) or the given ids (a runner giving work back). The lease check
 * and the push are one step, so an item is requeued once per expiry however many runners repair.
 *
 * KEYS: flight, ready. ARGV: 'expired', max | 'ids', ids...
 * Returns the number requeued.
 */
export const REQUEUE_LUA = `${LANE_LIB}
local flight, ready = KEYS[1], KEYS[2]
local now = now_ms()
local ids
if ARGV[1] == 'expired' then
  ids = redis.call('ZRANGEBYSCORE', flight, '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
else
  ids = {}
  for i = 2, #ARGV do ids[#ids + 1] = ARGV[i] end
end
local n = 0
for _, id in ipairs(ids) do
  local score = redis.call('ZSCORE', flight, id)
  if score and score ~= 'inf' then
    redis.call('ZADD', flight, '+inf', id)
    redis.call('RPUSH', ready, id)
    n = n + 1
  end
end
return n
`;

/**
 * Extends the leases of items a runner is still working on. Only leased items (finite score) are
 * touched: an item already requeued or released stays as it is.
 *
 * KEYS: flight. ARGV: leaseMs, ids...
 */
export const RENEW_LUA = `${LANE_LIB}
local flight = KEYS[1]
local deadline = now_ms() + tonumber(ARGV[1])
local n = 0
for i = 2, #ARGV do
  local score = redis.call('ZSCORE', flight, ARGV[i])
  if score and score ~= 'inf' then
    redis.call('ZADD', flight, deadline, ARGV[i])
    n = n + 1
  end
end
return n
`;
