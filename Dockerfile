FROM python:3.12-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY shared shared
COPY services services
COPY evals evals
RUN pip install --no-cache-dir .
USER nobody
