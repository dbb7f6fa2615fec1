# gpulint: the CLI and the admission webhook (`gpulint serve`).
FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY gpulint gpulint
COPY rules rules
COPY schemas schemas
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.12-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["gpulint"]
CMD ["serve", "--help"]
