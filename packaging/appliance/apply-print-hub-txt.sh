#!/bin/sh
# Applies the installer's settings file on the boot partition (docs/appliance.md, "print-hub.txt"): KEY=VALUE
# lines, read as data and never run. Every value is checked first; one bad line rejects the whole file, so that
# nothing is half applied, and the reason is written beside it as print-hub.txt.error for the installer to read
# on a laptop. Once applied, the file is renamed print-hub.txt.applied with the Wi-Fi passphrase and the
# enrollment token blanked.
#
# BOOT (default /boot/firmware) and ROOT (default /, a prefix for what is written) are for the tests.
set -eu
boot=${BOOT:-/boot/firmware}
root=${ROOT:-}
source_file="$boot/print-hub.txt"
defaults="$root/etc/default/print-hub"
wpa_conf="$root/etc/wpa_supplicant/wpa_supplicant-wlan0.conf"

[ -f "$source_file" ] || exit 0
rm -f "$boot/print-hub.txt.error"

fail() {
  echo "print-hub.txt: $*" >&2
  printf 'print-hub.txt was not applied: %s\n' "$*" >"$boot/print-hub.txt.error"
  exit 1
}

cloud_url='' wifi_ssid='' wifi_passphrase='' wifi_country='' enroll_token='' printers=''
bom=$(printf '\357\273\277')
number=0
while IFS= read -r line || [ -n "$line" ]; do
  number=$((number + 1))
  [ "$number" = 1 ] && line=${line#"$bom"}
  # Files saved on Windows end their lines with CR LF.
  line=${line%"$(printf '\r')"}
  trimmed=$(printf '%s' "$line" | sed 's/^[[:space:]]*//')
  case "$trimmed" in '' | '#'*) continue ;; esac
  case "$trimmed" in *=*) ;; *) fail "line $number is not KEY=VALUE" ;; esac
  key=$(printf '%s' "${trimmed%%=*}" | sed 's/[[:space:]]*$//')
  # Blanks around the value are dropped; a value that needs them is put in double quotes, which are removed.
  value=$(printf '%s' "${trimmed#*=}" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
  case "$value" in \"*\") value=${value#\"} value=${value%\"} ;; esac
  case "$key" in
    CLOUD_URL) cloud_url=$value ;;
    WIFI_SSID) wifi_ssid=$value ;;
    WIFI_PASSPHRASE) wifi_passphrase=$value ;;
    WIFI_COUNTRY) wifi_country=$(printf '%s' "$value" | tr '[:lower:]' '[:upper:]') ;;
    ENROLL_TOKEN) enroll_token=$value ;;
    PRINTER)
      # A printer the hub cannot find by itself (a serial line, a network printer): `print-hub run --printer`'s
      # URI. Checked here for what an EnvironmentFile and the service's word splitting let through; the hub
      # checks the rest when it starts and logs what is wrong.
      printf '%s\n' "$value" | grep -Eqx '(socket://|serial:/dev/|usblp:/dev/|usb://|ipps?://)[A-Za-z0-9._~:/?&=%+,-]{1,480}' ||
        fail "line $number: PRINTER must be a printer URI such as serial:/dev/ttyUSB0?language=escpos (no blanks)"
      printers="$printers --printer $value"
      ;;
    *) fail "line $number: unknown setting $key" ;;
  esac
done <"$source_file"

# Values go into a systemd EnvironmentFile and a wpa_supplicant configuration: only characters that mean
# nothing to either are let through.
if [ -n "$cloud_url" ] &&
  ! printf '%s\n' "$cloud_url" | grep -Eqx 'https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?'; then
  fail "CLOUD_URL must be an http(s) URL such as https://print.example.com"
fi
if [ -n "$enroll_token" ] && ! printf '%s\n' "$enroll_token" | grep -Eqx '[A-Za-z0-9._~+/=-]{1,512}'; then
  fail "ENROLL_TOKEN has characters a token does not have"
fi
if [ -n "$wifi_country" ] && ! printf '%s\n' "$wifi_country" | grep -Eqx '[A-Z]{2}'; then
  fail "WIFI_COUNTRY must be a two-letter country code (ISO 3166-1), such as DE"
fi
if [ -n "$wifi_ssid" ]; then
  # IEEE 802.11: an SSID is 1 to 32 octets. It is written in hex, so any octet is safe.
  length=$(printf '%s' "$wifi_ssid" | wc -c)
  [ "$length" -le 32 ] || fail "WIFI_SSID is longer than 32 bytes"
  # IEEE 802.11i: a passphrase is 8 to 63 printable ASCII characters; 64 hex digits are the key itself.
  if [ -n "$wifi_passphrase" ] &&
    ! printf '%s\n' "$wifi_passphrase" | LC_ALL=C grep -Eqx '[ -~]{8,63}|[0-9A-Fa-f]{64}'; then
    fail "WIFI_PASSPHRASE must be 8 to 63 printable ASCII characters (or 64 hex digits)"
  fi
elif [ -n "$wifi_passphrase" ]; then
  fail "WIFI_PASSPHRASE is set but WIFI_SSID is not"
fi

# Each file is written beside its place and renamed over it, then synced: a power cut leaves the old or the new.
replace() {
  sync "$1.new"
  mv -f "$1.new" "$1"
}

if [ -n "$cloud_url" ] || [ -n "$enroll_token" ] || [ -n "$printers" ]; then
  mkdir -p "$(dirname "$defaults")"
  [ -f "$defaults" ] || printf 'PRINT_HUB_CLOUD=\nPRINT_HUB_OPTIONS=\n' >"$defaults"
  # The options the file gives replace those of their kind (a new token the old one, the PRINTER lines every
  # --printer before them) and keep the rest.
  awk -v cloud="$cloud_url" -v token="$enroll_token" -v printers="$printers" '
    /^PRINT_HUB_CLOUD=/ && cloud != "" { print "PRINT_HUB_CLOUD=" cloud; next }
    /^PRINT_HUB_OPTIONS=/ && (token != "" || printers != "") {
      n = split(substr($0, 19), word, /[ \t]+/)
      kept = ""
      for (i = 1; i <= n; i++) {
        if (word[i] == "") continue
        if ((word[i] == "--enroll" && token != "") || (word[i] == "--printer" && printers != "")) { i++; continue }
        kept = kept " " word[i]
      }
      if (token != "") kept = kept " --enroll " token
      kept = kept printers
      sub(/^ /, "", kept)
      print "PRINT_HUB_OPTIONS=" kept
      next
    }
    { print }
  ' "$defaults" >"$defaults.new"
  chmod 0600 "$defaults.new"
  replace "$defaults"
fi

if [ -n "$wifi_ssid" ]; then
  mkdir -p "$(dirname "$wpa_conf")"
  ssid_hex=$(printf '%s' "$wifi_ssid" | od -An -v -tx1 | tr -d ' \n')
  (
    umask 077
    {
      echo 'ctrl_interface=DIR=/run/wpa_supplicant GROUP=netdev'
      echo 'update_config=0'
      [ -z "$wifi_country" ] || echo "country=$wifi_country"
      echo 'network={'
      echo "  ssid=$ssid_hex"
      echo '  scan_ssid=1'
      if [ -z "$wifi_passphrase" ]; then
        echo '  key_mgmt=NONE'
      elif printf '%s\n' "$wifi_passphrase" | grep -Eqx '[0-9A-Fa-f]{64}'; then
        echo "  psk=$wifi_passphrase"
      else
        # wpa_supplicant.conf(5): a quoted passphrase ends at the line's last double quote, so quotes inside are kept.
        printf '  psk="%s"\n' "$wifi_passphrase"
      fi
      echo '}'
    } >"$wpa_conf.new"
  )
  replace "$wpa_conf"
fi

# The secrets do not stay on a partition any laptop can read.
sed -e 's/^\([[:space:]]*WIFI_PASSPHRASE[[:space:]]*=\).*/\1(applied)/' \
  -e 's/^\([[:space:]]*ENROLL_TOKEN[[:space:]]*=\).*/\1(applied)/' "$source_file" >"$boot/print-hub.txt.applied"
rm -f "$source_file"
sync
echo "print-hub.txt: applied${cloud_url:+ (cloud $cloud_url)}${wifi_ssid:+ (Wi-Fi $wifi_ssid)}${enroll_token:+ (enrollment token)}${printers:+ (printers:$printers)}"
