# The specdec REST service: gunicorn serving specdec_service:create_app() on port 8000.
#   docker build -t specdec-service . && docker run --rm -p 8000:8000 specdec-service
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies and the package first (the layer changes only with the code).
COPY pyproject.toml README.md LICENSE ./
COPY service ./service
RUN pip install . && rm -rf service build

COPY gunicorn.conf.py openapi.yaml ./

RUN useradd --system --uid 10001 --user-group --no-create-home specdec
USER specdec

ENV SPECDEC_BIND=0.0.0.0:8000 \
    SPECDEC_WORKERS=2
EXPOSE 8000

HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2).status != 200)"]

CMD ["gunicorn", "--config", "gunicorn.conf.py"]
