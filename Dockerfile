# Rendergate: one image for every role. The role comes from RENDERGATE_ROLE (serve | api | worker),
# and arguments run the operator CLI instead:
#   docker run --rm -e RENDERGATE_URL=https://… -e RENDERGATE_ADMIN_TOKEN=… rendergate keys create --account you@example.com
# Two stages on the current Node LTS: the first compiles TypeScript (`npm run build`) with the dev
# tools, the second holds only the built JavaScript and the production dependencies and runs as the
# unprivileged `node` user. ffmpeg, sharp's libvips and the embedded PostgreSQL come as prebuilt
# binaries inside npm packages (both stages use the same Debian release, so they match).
# Updating Node: change NODE_IMAGE here (docs/operations.md "Upgrades").
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
# tini as PID 1: forwards SIGTERM to node (graceful shutdown) and reaps orphaned children (ffmpeg, and
# the embedded PostgreSQL's postmaster, which pg_ctl detaches).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV NODE_ENV=production
# dist/ reads migrations/, catalog/ and package.json from the directory above it (/app).
COPY --from=build /src/package.json /src/package-lock.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY catalog ./catalog
COPY migrations ./migrations

# Only used by the single-process default (embedded PostgreSQL, files, generated admin token); a cluster
# uses DATABASE_URL and RENDERGATE_STORAGE=s3://… and keeps nothing here.
RUN mkdir -p /data && chown node:node /data
USER node

ENV HOST=0.0.0.0 \
    PORT=8080 \
    RENDERGATE_DATA_DIR=/data \
    RENDERGATE_ROLE=serve
EXPOSE 8080

# Every role answers /healthz on PORT (a worker serves only /healthz, /readyz and /metrics).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["tini", "--", "node", "dist/main.js"]
# No arguments: run the service in the role RENDERGATE_ROLE names (serve by default).
CMD []
