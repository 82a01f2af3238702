# A small static image: the build stage runs the same `make build` as everyone else.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make build

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/leaselab /usr/local/bin/leaselab
VOLUME /data
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/leaselab"]
CMD ["serve", "--addr", "0.0.0.0:8080", "--db", "/data/leaselab.db"]
