# Ocelog image for docker-compose.yml: `ocelog <command>` (ENTRYPOINT is the CLI; default `serve`).
# Build stage compiles TypeScript and better-sqlite3's native module; the runtime stage keeps only
# production dependencies and dist/. Node 20, the oldest that package.json "engines" allows (better-sqlite3 12, vitest 4).
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source when its prebuilt binary cannot be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# The workspace of the TypeScript client (@ocelog/client): `npm ci` needs its package.json, the build its sources.
COPY clients/typescript/package.json clients/typescript/tsconfig.json ./clients/typescript/
COPY clients/typescript/src ./clients/typescript/src
COPY src ./src
COPY projections ./projections
COPY bench ./bench
COPY scripts ./scripts
COPY ui ./ui
# `npm ci` runs the `prepare` script, which builds dist/.
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# glibc's arena cap of the service (SERVICE_ENV in src/app/runtime.ts; docs/operations.md#glibc-arenas), so that
# `docker run` without docker-compose.yml gets it too. It is read at start and harmless for the other commands.
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The service imports the API contract from the client package (@ocelog/client/contract), linked from node_modules.
COPY --from=build /app/clients/typescript/package.json ./clients/typescript/package.json
COPY --from=build /app/clients/typescript/dist ./clients/typescript/dist
# OCELOG_DATA_DIR for the embedded default (unused when EVENTSTORE_URL and MONGODB_URL are set).
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
ENTRYPOINT ["node", "dist/src/cli/main.js"]
CMD ["serve"]
