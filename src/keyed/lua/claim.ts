import { LANE_LIB } from "./lane-lib.js";

/**
 * Claims up to `count` ready items for one runner: pops them from the ready list and starts
 * their lease in the same step, so an item is either ready or leased, never lost between. An id
 * whose item was released meanwhile, or is already leased, is dropped.
 *
 * KEYS: ready, flight, items. ARGV: count, leaseMs.
 * Returns a flat list: id, record, id, record, ...
 */
export const CLAIM_LUA = `${LANE_LIB}
local ready, flight, items = KEYS[1], KEYS[2], KEYS[3]
local deadline = now_ms() + tonumber(ARGV[2])
local ids = redis.call('LPOP', ready, tonumber(ARGV[1]))
local out = {}
if not ids then return out end
for _, id in ipairs(ids) do
  if redis.call('ZSCORE', flight, id) == 'inf' then
    local rec = redis.call('HGET', items, id)
    if rec then
      redis.call('ZADD', flight, deadline, id)
      out[#out + 1] = id
      out[#out + 1] = rec
    end
  end
end
return out
`;
