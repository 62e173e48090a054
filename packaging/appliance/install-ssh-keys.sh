#!/bin/sh
# Installs the public keys the installer put on the boot partition as authorized_keys (docs/appliance.md, "SSH")
# for root, the only login there is: the appliance has no password, so without this file there is no login and
# ssh.service does not start (its drop-in's condition). Lines that are not public keys are dropped. The file
# is renamed authorized_keys.applied, so a key removed later is not brought back at the next boot.
#
# BOOT (default /boot/firmware) and ROOT (default /) are for the tests.
set -eu
boot=${BOOT:-/boot/firmware}
root=${ROOT:-}
source_file="$boot/authorized_keys"
target="$root/root/.ssh/authorized_keys"

[ -f "$source_file" ] || exit 0
install -d -m 0700 "$root/root/.ssh"
touch "$target"
chmod 0600 "$target"
# sshd(8), AUTHORIZED_KEYS FILE FORMAT: [options] keytype base64-key [comment]; options are not taken from a
# file anyone could have edited, so only lines that start with a key type are kept.
tr -d '\r' <"$source_file" |
  grep -E '^(ssh-(ed25519|rsa)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/=]+( .*)?$' |
  while IFS= read -r key; do
    grep -qxF "$key" "$target" || printf '%s\n' "$key" >>"$target"
  done
sync "$target"
mv -f "$source_file" "$boot/authorized_keys.applied"
sync
echo "authorized_keys: $(grep -c . "$target") key(s) for root"
