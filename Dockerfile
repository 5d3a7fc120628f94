# syntax=docker/dockerfile:1
# Herald: one self-contained binary (bun build --compile) run under Litestream, which replicates the SQLite file.
# Build:  docker build -t herald .
# Run:    docker run --init -p 8080:8080 -v herald_data:/data \
#           -e HERALD_MASTER_KEY=$(openssl rand -hex 32) -e LITESTREAM_REPLICA_URL=s3://bucket/herald herald
# See docs/operations.md ("Deployment and backups").

# ---- Stage 1: install and compile ---------------------------------------------------------------------------
# The Litestream binary comes from @flydotio/litestream-linux-x64 (an optional dependency): build for amd64.
FROM node:20-bookworm-slim AS build
WORKDIR /app

COPY package.json package-lock.json ./
# devDependencies included: the `bun` package is what compiles the binary.
RUN npm ci --no-audit --no-fund

# Only what the build reads (so no .dockerignore is needed): the sources, the migrations it embeds, the SDK
# package definition (sdk/) whose tarball it embeds (docs/sdk.md), and the docs the developer portal serves (its
# guides, the Python signer and the webhook receiver example are embedded in the binary).
COPY tsconfig.json ./
COPY src ./src
COPY drizzle ./drizzle
COPY sdk ./sdk
COPY docs ./docs
RUN npm run build \
 && cp "node_modules/@flydotio/litestream-linux-x64/litestream" dist/litestream \
 && ./dist/herald version \
 && ./dist/litestream version

# ---- Stage 2: runtime -----------------------------------------------------------------------------------------
FROM debian:bookworm-slim

# ca-certificates: Litestream talks TLS to S3. curl: the HEALTHCHECK (herald has no health subcommand).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*

RUN groupadd --system herald \
 && useradd --system --gid herald --home-dir /data --no-create-home --shell /usr/sbin/nologin herald \
 && mkdir -p /data \
 && chown herald:herald /data

COPY --from=build /app/dist/herald /usr/local/bin/herald
COPY --from=build /app/dist/litestream /usr/local/bin/litestream
COPY litestream.yml /etc/litestream.yml

WORKDIR /data
ENV HERALD_DB_PATH=/data/herald.db \
    NODE_ENV=production \
    PORT=8080 \
    HOME=/data
EXPOSE 8080

HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${PORT:-8080}/healthz" || exit 1

# The container starts as root only to hand /data to herald: a Fly volume (or a bind mount) is mounted
# root-owned over the image's /data, and a restore run from `fly ssh console` leaves root-owned files. Then it
# drops to the unprivileged herald user with setpriv (util-linux, in the base image) and execs the CMD, so
# Litestream is the process that receives SIGTERM. Started with `--user herald`, it just execs the CMD.
ENTRYPOINT ["/bin/sh", "-c", "if [ \"$(id -u)\" = 0 ]; then chown -R herald:herald /data && exec setpriv --reuid=herald --regid=herald --init-groups -- \"$@\"; fi; exec \"$@\"", "herald-entrypoint"]
# Litestream restores nothing by itself: it replicates the DB and runs herald as its child; on SIGTERM it
# forwards the signal, waits for herald to drain and exit, and does a final sync.
CMD ["litestream", "replicate", "-config", "/etc/litestream.yml", "-exec", "herald serve"]
