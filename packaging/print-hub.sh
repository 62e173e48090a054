#!/bin/sh
# The print hub launcher (docs/hub-updates.md): runs the release that /opt/print-hub/current points at, with
# the Node.js runtime that release carries. Before that, it settles a self-update on trial: a release that
# was already started once and never confirmed (it crashed, or gave up because it did not connect to the
# cloud in time) is rolled back to the previous release, and the result is recorded for the hub to report.
set -e
here=$(dirname "$(readlink -f "$0")")
root=$(dirname "$here")
state="$root/update"
trial="$state/trial"

field() { sed -n "s/^$1=//p" "$trial" | head -n 1; }
is_version() { case "$1" in '' | *[!0-9.]* | .* | *. | *..*) return 1 ;; *) return 0 ;; esac; }

if [ -f "$trial" ]; then
  version=$(field version)
  previous=$(field previous)
  starts=$(field starts)
  if [ "${starts:-0}" = 0 ]; then
    # The first start of the new release: count it, so that a second start means it did not come up.
    sed 's/^starts=.*/starts=1/' "$trial" >"$trial.launcher" && mv -f "$trial.launcher" "$trial"
  else
    reason=$(field reason)
    if is_version "$previous" && [ -d "$root/releases/$previous" ]; then
      # A new symlink renamed over the old one: the switch back is atomic, like the switch forward.
      ln -sfn "releases/$previous" "$root/current.launcher"
      mv -fT "$root/current.launcher" "$root/current"
    fi
    is_version "$version" || version=0.0.0
    {
      printf 'version=%s\nstatus=failed\nfailure=rolled_back\n' "$version"
      printf 'detail=%s; rolled back to %s\n' "${reason:-it stopped before it connected to the cloud}" "$previous"
      printf 'at=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)"
    } >"$state/result.launcher"
    mv -f "$state/result.launcher" "$state/result"
    rm -f "$trial"
    echo "print-hub: release $version did not come up; rolled back to $previous" >&2
  fi
fi

PRINT_HUB_INSTALL_ROOT="$root"
export PRINT_HUB_INSTALL_ROOT
# V8 flags for a small appliance (docs/hub-updates.md, "Memory"): a young generation of 1 MB per semi-space, V8's
# memory-over-speed heuristics, no V8 helper threads, and WebAssembly (Node's HTTP parser for fetch) compiled by
# the baseline compiler only. Measured on the packaged hub, idle after 10 s, five runs each: 85-88 MB without the
# first three, 77-78 MB with them; start-up to "hub ready" 0.3 s → 0.4-0.5 s. The fourth: see docs/hub-updates.md.
exec "$root/current/runtime/bin/node" --max-semi-space-size=1 --optimize-for-size --single-threaded --liftoff-only \
  "$root/current/lib/hub.mjs" "$@"
