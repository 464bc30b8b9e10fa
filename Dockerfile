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
# --ignore-scripts: Tenor relies on no install script (npm 11 skips them anyway, see
# shared/notes/environment.md), and Prisma's would try to download a native engine.
RUN npm ci --ignore-scripts
COPY . .
RUN npm run db:generate && npm run build

# ---- runtime: production dependencies and build output only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies include tsx (npm run db:migrate runs from source) and
# @prisma/schema-engine-wasm (migrations without a native engine).
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# src/ carries the generated Prisma client (src/generated) and, with scripts/ and tsconfig.json,
# lets the one-shot migrate service run `npm run db:migrate` through tsx.
COPY --from=build /app/src ./src
COPY --from=build /app/scripts ./scripts
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/tsconfig.json ./tsconfig.json
# Files stay owned by root and read-only to the process; the roles never write into /app.
USER node
# api (and its health endpoints), runner health, indexer health.
EXPOSE 3000 3001 3002
CMD ["node", "dist/src/main.js"]
