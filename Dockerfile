# Rendergate: one image for every role. The role comes from RENDERGATE_ROLE (serve | api | worker),
# and arguments run the operator CLI instead:
#   docker run --rm -e DATABASE_URL=… -e RENDERGATE_ADMIN_TOKEN=… rendergate keys create --account acct_…
# TypeScript runs through tsx (a runtime dependency), so there is no build step; ffmpeg, sharp's libvips
# and the embedded PostgreSQL come as prebuilt binaries inside npm packages.
FROM node:20-bookworm-slim

# tini as PID 1: forwards SIGTERM to node (graceful shutdown) and reaps orphaned children (ffmpeg, and
# the embedded PostgreSQL's postmaster, which pg_ctl detaches).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY bin ./bin
COPY catalog ./catalog
COPY migrations ./migrations
COPY src ./src

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

ENTRYPOINT ["tini", "--", "node", "--import", "tsx", "src/main.ts"]
# No arguments: run the service in the role RENDERGATE_ROLE names (serve by default).
CMD []
