#!/bin/sh
# Stand-in for Prisma's native schema engine, which cannot be downloaded on Tenor's offline machines.
# `prisma generate` only needs PRISMA_SCHEMA_ENGINE_BINARY to name an existing file; the client
# generator itself is WebAssembly. Any Prisma CLI command that really starts the native engine
# (migrate, db push, db pull, ...) lands here and fails loudly instead of silently succeeding.
echo "tenor: Prisma's native schema engine is not used in this repository (no network to download it)." >&2
echo "tenor: use npm run db:migrate, db:migration:new or db:check (WebAssembly schema engine) instead." >&2
exit 78
