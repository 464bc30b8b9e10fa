-- The nonce window (src/chain/nonce-window.ts) looks up the runs waiting on one sender's window
-- (src/chain/store/pg-nonce-window.ts) every time a slot frees. Without this index PostgreSQL
-- reads every waiting run in updated_at order through executions_status_updated_at_idx and
-- unpacks each one's waiting_for: for a sender with no waiter, all of them (40 000 waiting runs
-- of 100 000: 0.8 s a lookup). Indexed by the window a run waits on, oldest first, only over the
-- runs waiting on a nonce window. A run waits on at most one window at a time (the transaction
-- lifecycle reserves one nonce at a time), so its first nonce wait is its window. Prisma's
-- schema cannot state an expression index; the lookup writes the same expressions.
CREATE INDEX "executions_nonce_window_waiters_idx"
  ON "executions" ((jsonb_path_query_first("waiting_for", '$[*] ? (@.kind == "nonce").name') #>> '{}'), "updated_at")
  WHERE "status" = 'waiting' AND "waiting_for" @? '$[*] ? (@.kind == "nonce")';
