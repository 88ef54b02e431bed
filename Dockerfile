# Argus: one image for every role (`serve <service>`, `up`, `operator`, `worker …`). README.md § Container image.
#
#   docker build -t argus .                      # the CPU image (the last stage, `runtime`)
#   docker build --target cuda -t argus:cuda .   # onnxruntime's CUDA execution provider (GPU node pools)
#
# Base images are build args (defaults: the public node:20-bookworm-slim to build, debian:bookworm-slim to run);
# machines that reach no registry make their own (hack/image/build.sh). Where HTTPS goes through a proxy with its own CA, mount the CA bundle and name it:
#   --volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
#   --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
# (an ARG, so the path is never baked into the image; each stage that reaches the network declares it).
ARG BUILD_IMAGE=node:20-bookworm-slim
# The runtime needs Debian and the node binary only (copied from the build image): not npm, yarn or corepack.
ARG RUNTIME_IMAGE=debian:bookworm-slim
# CUDA 12 + cuDNN 9 as onnxruntime-node 1.30's CUDA provider needs; only its libraries are copied (stage `cuda`).
ARG CUDA_IMAGE=nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04

# ---- build: every dependency, the compiled JavaScript, the default models, then only what production loads ----
FROM ${BUILD_IMAGE} AS build
ARG NODE_EXTRA_CA_CERTS
# strip (binutils): the symbol tables of native addons are not needed to run them (LanceDB's: 20 MB).
RUN apt-get update && apt-get install -y --no-install-recommends binutils && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# No install scripts: onnxruntime-node's would fetch GPU files (.npmrc skips them anyway) and the ffmpeg installers'
# only set the executable bit, which is set for every user below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY hack/build-dist.ts hack/image/prune-runtime.ts hack/
COPY bin bin
COPY operator operator
COPY services services
RUN npm run build
# The models every service uses, imported into the image so that a pod starts offline (folders 0755, files 0644).
RUN ARGUS_MODELS_DIR=/app/models node dist/bin/argus.js models import
RUN node --import tsx hack/prune-runtime.ts \
 && find node_modules -type f -name '*.node' -exec strip --strip-unneeded {} + \
 && chmod 0755 node_modules/@ffmpeg-installer/*/ffmpeg node_modules/@ffprobe-installer/*/ffprobe

# ---- build-cuda: onnxruntime-node's CUDA provider libraries (its own installer, from NuGet) ----
FROM build AS build-cuda
ARG NODE_EXTRA_CA_CERTS
RUN ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js

# ---- app: what every variant runs ----
FROM ${RUNTIME_IMAGE} AS app
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="Argus" \
      org.opencontainers.image.description="Video AI services, operator and workers (argus serve|up|operator|worker)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"
COPY --from=build /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/models models
COPY --from=build /app/dist dist
# /data: the embedded state (ARGUS_DATA_DIR), the one place besides /tmp a service writes; mount a volume there
# (the root filesystem can be read-only).
RUN ln -s /app/dist/bin/argus.js /usr/local/bin/argus \
 && mkdir -p /data && chown 10001:10001 /data && chmod 0750 /data
# Services listen on every interface in a container (each *_HOST defaults to 127.0.0.1 outside one).
ENV NODE_ENV=production \
    ARGUS_DATA_DIR=/data \
    ARGUS_MODELS_DIR=/app/models \
    MM_DATAPREP_HOST=0.0.0.0 \
    ALERT_DISPATCH_HOST=0.0.0.0 \
    FRAME_ANALYSIS_HOST=0.0.0.0 \
    CAPTION_QA_HOST=0.0.0.0 \
    CAPTION_RUNS_HOST=0.0.0.0 \
    CAMERA_RULES_HOST=0.0.0.0
# dataprep, alert-dispatch, camera-rules, frame-analysis, caption-qa, caption-runs, operator (/healthz /metrics).
EXPOSE 6007 8000 8001 8085 4172 4173 8080
USER 10001:10001
# node is PID 1 (through env): it handles SIGTERM itself and stops within ARGUS_SHUTDOWN_GRACE_SECONDS.
ENTRYPOINT ["argus"]
CMD ["up"]

# ---- cuda: the CPU image plus onnxruntime's CUDA provider and the CUDA 12 / cuDNN 9 user-space libraries ----
# Run it with ARGUS_ORT_PROVIDER=cuda (set here) on a node with the NVIDIA driver and container toolkit. Every library
# of the CUDA runtime image is copied (several GB): which ones onnxruntime loads could not be checked without a GPU.
FROM ${CUDA_IMAGE} AS cuda-libraries
FROM app AS cuda
COPY --from=build-cuda /app/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/ \
     /app/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/
COPY --from=cuda-libraries /usr/local/cuda/targets/x86_64-linux/lib/ /usr/local/cuda/lib64/
COPY --from=cuda-libraries /usr/lib/x86_64-linux-gnu/libcudnn* /usr/local/cuda/lib64/
ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64 \
    ARGUS_ORT_PROVIDER=cuda \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility

# ---- runtime: the CPU image, the default target (the last stage) ----
FROM app AS runtime
