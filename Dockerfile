# syntax=docker/dockerfile:1
# One image for every Tenor role: the role is chosen at run time with DAPI_ROLE=api|runner|indexer
# (see docker-compose.yml). Build: docker build -t tenor:local .

# Node 20.20 is the version Tenor is built and tested on; override with --build-arg if needed.
ARG NODE_IMAGE=node:20.20-bookworm-slim

# ---- build: full dependencies, generated Prisma client, compiled dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first so the dependency layer is cached until package-lock.json changes.
COPY package.json package-lock.json ./
# --ignore-scripts: Tenor relies on no install script (npm 11 skips them anyway), and Prisma's
# would try to download a native engine.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run db:generate && npm run build

# ---- runtime: production dependencies and compiled JavaScript only (no tsx, no source tree) ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# @prisma/schema-engine-wasm is a production dependency: migrations need no native engine.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
# dist/ holds the roles, the generated Prisma client and the migration command
# (node dist/scripts/db/migrate.js, also `npm run start:migrate`); prisma/ holds the schema and
# the migrations it applies.
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
# Files stay owned by root and read-only to the process; the roles never write into /app.
USER node
# api (and its health endpoints), runner health, indexer health; every role serves /metrics too.
EXPOSE 3000 3001 3002
# /readyz of the role DAPI_ROLE names, on the port its configuration gives it.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=6 \
  CMD ["node", "dist/scripts/healthcheck.js"]
CMD ["node", "dist/workers/main.js"]
