#!/bin/sh
# The official image's entry point, as far as compose uses it: `server`, `master`, `volume`,
# `filer`, `s3`, `shell`… run that weed command logging to stderr; anything else runs as given.
set -e
case "${1:-}" in
  server | master | volume | filer | s3 | shell | version | mount | iam | webdav | backup | export)
    exec /usr/bin/weed -logtostderr=true "$@" ;;
  "") exec /usr/bin/weed ;;
  *) exec "$@" ;;
esac
