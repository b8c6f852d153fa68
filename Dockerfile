# The specdec REST service: gunicorn serving specdec_service:create_app() on port 8000.
#   docker build -t specdec-service . && docker run --rm -p 8000:8000 specdec-service
# The base image by digest (the tag is for people): a rebuild gets the same bytes. To move
# it: `docker buildx imagetools inspect python:3.11-slim` names the current digest.
FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# 1. The dependencies alone, locked with their hashes (requirements.lock, made from
#    pyproject.toml by the command in its header; docs/deploy.md): this layer is rebuilt
#    only when the lock changes, never for a change of the code.
COPY requirements.lock ./
RUN pip install --require-hashes --only-binary :all: -r requirements.lock

# 2. The package, without its dependencies (layer 1 has them; `pip check` proves it).
COPY pyproject.toml README.md LICENSE ./
COPY service ./service
RUN pip install --no-deps . && pip check && rm -rf service build

COPY gunicorn.conf.py openapi.yaml ./

RUN useradd --system --uid 10001 --user-group --no-create-home specdec
USER specdec

ENV SPECDEC_BIND=0.0.0.0:8000 \
    SPECDEC_WORKERS=2
EXPOSE 8000

HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2).status != 200)"]

CMD ["gunicorn", "--config", "gunicorn.conf.py"]
