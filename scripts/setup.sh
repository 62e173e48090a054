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
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The tests start their own Mosquitto and Redis in temporary directories. Where systemd runs, Debian starts
# the packaged ones on install, and its Mosquitto would hold 1883, the embedded broker's MQTT_PORT: stop and
# disable them (an operator who wants them as the cloud's engines enables them again, README "Several nodes").
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  for service in mosquitto redis-server; do
    $sudo systemctl disable --now "$service" >/dev/null 2>&1 || true
  done
fi

# `npm install`, not `npm ci`: the registry reachable here serves only the Linux builds of Biome's optional
# platform packages, so the lock file cannot list the others and `npm ci` would refuse it. `npm install`
# still installs exactly the versions in package-lock.json.
npm install --no-fund --no-audit
