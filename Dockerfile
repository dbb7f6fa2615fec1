# gpulint: the CLI and the admission webhook (`gpulint serve --live-inventory`).
#
#   docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/gpulint:0.1.0 --push .
#
# Every dependency has wheels for both architectures (cel-expr-python needs glibc >= 2.28:
# bookworm has 2.36), so nothing compiles. The image runs as a non-root user and writes
# nothing: the chart mounts the root filesystem read-only.
ARG PYTHON=3.12-slim-bookworm

FROM python:${PYTHON} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gpulint gpulint
COPY rules rules
COPY schemas schemas
# gpulint and every dependency as wheels, the live-inventory client included
RUN pip wheel --no-cache-dir --wheel-dir /wheels '.[live]'

FROM python:${PYTHON}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=build /wheels /wheels
# --no-index: the final stage installs what the build stage resolved, nothing else
RUN pip install --no-cache-dir --no-index --find-links /wheels 'gpulint[live]' && rm -rf /wheels
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["gpulint"]
CMD ["serve", "--help"]
