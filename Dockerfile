# syntax=docker/dockerfile:1
# Production image: compiled JavaScript only, production dependencies only, a non-root user, a health check.
# It expects real services (MONGODB_URI, REDIS_URL, ARTIFACT_STORE=s3); the embedded database is for local use.
# NODE_ENV=production: it refuses to start without KEY_ENCRYPTION_KEY (openssl rand -base64 32), unless
# ALLOW_UNSEALED_KEYS=1 says the operator chose to keep private keys in the clear.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# client/ is a workspace of package.json: npm ci needs its manifest to match the lock file.
COPY package.json package-lock.json ./
COPY client/package.json ./client/
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY rest ./rest
COPY resolvers ./resolvers
# The staff console is bundled by the same build (console/build.ts writes dist/console).
COPY console ./console
RUN npm run build

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json ./client/
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY openapi ./openapi
COPY schema ./schema
COPY bin ./bin
# Read at run time from the checkout's layout: operation names of the trusted documents label the GraphQL metrics.
COPY src/generated/trusted-documents.json ./src/generated/
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# exec form: the process receives SIGTERM directly and drains in-flight requests.
CMD ["node", "dist/src/main.js"]
