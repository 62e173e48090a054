#!/bin/sh
# The print hub agent, run with the Node.js runtime it carries (README: Install a hub from a release).
set -e
here=$(dirname "$(readlink -f "$0")")
root=$(dirname "$here")
exec "$root/runtime/bin/node" "$root/lib/hub.mjs" "$@"
