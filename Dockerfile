# A small static image: the build stage runs the same `make build` as everyone else.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make build
# The data volume's directory, owned by the user the server runs as (distroless's nonroot,
# 65532): a new volume takes the ownership of the directory it is mounted on.
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/leaselab /usr/local/bin/leaselab
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME /data
EXPOSE 8443
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/leaselab"]
# Beyond loopback leaselab needs tokens: the image starts in workshop mode over HTTPS and prints
# the instructor's join link (docker logs). Add --public-url https://HOST:8443 so that join links
# and kubeconfigs name the address participants use.
CMD ["serve", "--addr", "0.0.0.0:8443", "--db", "/data/leaselab.db", "--workshop", "30"]
