#!/bin/sh
# SeaweedFS for compose's `s3` profile, in one process: master, volume server, filer and the S3
# gateway (only 8333 is used, from the compose network). Then it makes the bucket Documents
# keeps bytes in, and only then reports ready (the health check reads the marker below).
# Credentials: weed's admin identity comes from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (set
# from DOCUMENTS_S3_ACCESS_KEY_ID / DOCUMENTS_S3_SECRET_ACCESS_KEY in .env); with one set, an
# unsigned or wrongly signed request is refused.
set -eu
: "${AWS_ACCESS_KEY_ID:?DOCUMENTS_S3_ACCESS_KEY_ID is not set in .env (deploy/compose adds it)}"
: "${AWS_SECRET_ACCESS_KEY:?DOCUMENTS_S3_SECRET_ACCESS_KEY is not set in .env (deploy/compose adds it)}"
: "${S3_BUCKET:?}"
ready=/tmp/compass-bucket-ready
rm -f "$ready"

# The volume server is advertised on 127.0.0.1: only the filer, in this process, reaches it.
# weed's Iceberg catalog and Lance listeners are off: Documents needs neither, and nothing else on
# the network should reach more of the store than its S3 API.
/usr/bin/weed -logtostderr=true server -dir=/data -ip=127.0.0.1 -ip.bind=0.0.0.0 \
  -s3 -s3.port=8333 -s3.port.iceberg=0 -s3.port.lance=0 \
  -volume.max=0 -master.volumeSizeLimitMB=1024 -master.telemetry=false &
weed_pid=$!
# SIGTERM goes on to weed. Its shutdown may not finish (4.48's filer keeps retrying the volume
# server it stopped), so a stop ends in SIGKILL after the grace period: what it acknowledged is in
# its volume files by then, which it checks against their indexes when it starts.
trap 'kill -TERM "$weed_pid" 2>/dev/null' TERM INT

until wget -q -O /dev/null http://127.0.0.1:8333/healthz 2>/dev/null; do
  kill -0 "$weed_pid" 2>/dev/null || exit 1
  sleep 1
done
until echo "s3.bucket.list" | /usr/bin/weed shell -master=127.0.0.1:9333 2>/dev/null | grep -q "^  $S3_BUCKET	"; do
  echo "s3.bucket.create -name $S3_BUCKET" | /usr/bin/weed shell -master=127.0.0.1:9333 >/dev/null 2>&1 || true
  kill -0 "$weed_pid" 2>/dev/null || exit 1
  sleep 1
done
echo "seaweedfs: bucket $S3_BUCKET ready on :8333" >&2
touch "$ready"
# A signal ends `wait` early; wait again until weed itself has exited.
while kill -0 "$weed_pid" 2>/dev/null; do wait "$weed_pid" || true; done
