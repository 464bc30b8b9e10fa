#!/usr/bin/env bash
# Quick start: install, create and migrate the database, start the api, runner and indexer roles
# as separate processes (with a local anvil as the dev chain, its price resolver and the demo-bond
# asset template), create a bond on it through the Platform API, and keep the roles running until
# Ctrl-C. `--exit-after-demo` stops the roles after the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/tenor}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
exit_after_demo=false
[[ "${1:-}" == "--exit-after-demo" ]] && exit_after_demo=true

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error(`Node ${process.versions.node} is too old: Tenor needs Node >= 20.19`); process.exit(1) }'

if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  step "Installing dependencies from the lock file"
  npm ci --no-audit --no-fund
fi

step "Checking PostgreSQL and Redis"
node --import tsx scripts/check-services.ts

step "Generating the Prisma client and migrating ${DATABASE_URL%%\?*}"
npm run --silent db:generate >/dev/null
npm run --silent db:migrate

step "Starting api, runner and indexer"
node --import tsx scripts/local.ts --wait-ready &
supervisor=$!
trap 'kill -TERM $supervisor 2>/dev/null; wait $supervisor 2>/dev/null' EXIT INT TERM

ready=false
for _ in $(seq 1 120); do
  if node -e '
    const ports = [process.env.TENOR_API_PORT ?? 3000, process.env.TENOR_RUNNER_HEALTH_PORT ?? 3001, process.env.TENOR_INDEXER_HEALTH_PORT ?? 3002];
    Promise.all(ports.map((p) => fetch(`http://127.0.0.1:${p}/readyz`).then((r) => r.ok))).then((ok) => process.exit(ok.every(Boolean) ? 0 : 1), () => process.exit(1));
  ' 2>/dev/null; then ready=true; break; fi
  kill -0 $supervisor 2>/dev/null || break
  sleep 0.5
done
if [[ $ready != true ]]; then echo "The roles did not become ready; see their output above." >&2; exit 1; fi

step "Demo: asset.create on the local anvil (token, feed, first observation, staleness bound: paused → active)"
node --import tsx scripts/demo.ts

if [[ $exit_after_demo == true ]]; then exit 0; fi
step "Tenor is running. Health: http://127.0.0.1:${TENOR_API_PORT:-3000}/readyz — Ctrl-C stops all three roles."
wait $supervisor
