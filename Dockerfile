# syntax=docker/dockerfile:1
# rlif GPU image: verl's official vLLM 0.24 image (CUDA 13.0.2, Ubuntu 24.04, Python 3.12, torch 2.11.0,
# vLLM 0.24.0, flash-attn 2.8.3) plus verl 0.9.1 and this project, installed into site-packages so that every Ray
# worker on every node imports the same rewards/, samplers/ and rlif/ code whatever its working directory.
#
#   docker build -t rlif:0.1.0 .
#   docker build --build-arg BASE_IMAGE=verlai/verl:vllm024.dev2 -t rlif:0.1.0 .   # CI's pinned tag
#
# No image is tagged for verl 0.9.1; vllm024.* is the 0.9.x line. The base image
# uninstalls verl and ships transformers 5.3.0 and TransferQueue 0.1.8, both below verl 0.9.1's floors, so they
# are upgraded here: transformers to 5.9.0 (the pin of verl's own [vllm] extra), TransferQueue to what V1 needs.
ARG BASE_IMAGE=verlai/verl:vllm024.latest
FROM ${BASE_IMAGE}

ARG VERL_VERSION=0.9.1
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_DISABLE_TELEMETRY=1

WORKDIR /opt/rlif

# verl first, in its own layer: it changes far less often than the project code.
RUN pip install "verl[verl-core]==${VERL_VERSION}" "transformers==5.9.0" "transferqueue>=0.1.10"

COPY pyproject.toml README.md ./
COPY rewards/ ./rewards/
COPY samplers/ ./samplers/
COPY rlif/ ./rlif/
COPY hf_data_download.py hf_model_download.py hf_upload.py ./
# The [gpu] extra pins the vLLM and flash-attn the base image ships, so it installs nothing there and pip check
# fails the build if the base image ever drifts from them. (DL3013: the project itself, its pins live in pyproject.)
# hadolint ignore=DL3013
RUN pip install ".[gpu]" && pip check

WORKDIR /workspace
CMD ["bash"]
