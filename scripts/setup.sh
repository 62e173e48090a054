#!/usr/bin/env bash
# Installs what the cloud, the hub and the tests need on Debian 12: system packages, then npm packages.
set -euo pipefail
cd "$(dirname "$0")/.."

# ghostscript: PDF inspection (cloud) and rendering (hub). openssl: test certificates.
# socat: the pty pair the serial-printer tests run over.
# python3, make, g++: better-sqlite3 compiles from source where no prebuilt binary is reachable.
# libgs-dev: ghostscript4js (the hub's render worker) compiles against libgs; without it the link fails
# with "cannot find .../libgs.so".
apt_packages=(ghostscript libgs-dev openssl socat python3 make g++ cups-ipp-utils dbus-daemon redis-server mosquitto postgresql chromium) # cups-ipp-utils, dbus-daemon: ippeveprinter, ipptool and a private D-Bus for the IPP printer tests; redis-server, mosquitto: test peers; postgresql: DATABASE_URL and the storage tests on both engines; chromium: the onboarding page's browser test (playwright-core drives it)
# haproxy: the hubs' front before an external Mosquitto (`cloud mosquitto-config` writes its configuration,
# docs/mqtt-broker.md), started by the tests as a peer.
apt_packages+=(haproxy)
# prometheus: its promtool checks the cloud's GET /metrics text (test/cloud/metrics/).
apt_packages+=(prometheus)
apt_packages+=(avahi-daemon avahi-utils) # the hub's DNS-SD advertiser runs avahi-publish-service; its tests start their own avahi-daemon (test/helpers/avahi.ts)
# Hub packages for the Raspberry Pi (`ota build --arch arm64|armhf`, ota/addons.ts): Debian's cross toolchains
# compile the native addons; lintian checks every package; qemu-user-static and debootstrap run the ARM
# packages in emulated Debian roots (test/ota/arm-package.test.ts).
apt_packages+=(crossbuild-essential-arm64 crossbuild-essential-armhf binutils-x86-64-linux-gnu lintian qemu-user-static debootstrap)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# The target architectures' libraries the addons link against (libgs, libudev) come from Debian's archive
# for that architecture (ota/target-libraries.ts: `apt-get download libgs-dev:arm64`), so apt needs its indexes.
foreign_added=0
for arch in arm64 armhf; do
  if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    $sudo dpkg --add-architecture "$arch"
    foreign_added=1
  fi
done
if [ "${#missing[@]}" -gt 0 ] || [ "$foreign_added" = 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # A mirror caught mid-sync fails one index (seen here for bookworm-security's armhf Packages); apt keeps the
  # others, and the install below fails by itself if what it needs is not there.
  $sudo apt-get update -qq || echo "setup: apt-get update reported the errors above; going on with the indexes it has" >&2
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The tests start their own Mosquitto, Redis and HAProxy in temporary directories. Where systemd runs, Debian
# starts the packaged ones on install, and its Mosquitto would hold 1883, the embedded broker's MQTT_PORT: stop and
# disable them (an operator who wants them as the cloud's engines enables them again, docs/several-nodes.md).
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  for service in mosquitto redis-server haproxy avahi-daemon.socket avahi-daemon; do
    $sudo systemctl disable --now "$service" >/dev/null 2>&1 || true
  done
fi

# `npm install`, not `npm ci`: the registry reachable here serves only the Linux builds of Biome's optional
# platform packages, so the lock file cannot list the others and `npm ci` would refuse it. `npm install`
# still installs exactly the versions in package-lock.json.
npm install --no-fund --no-audit
