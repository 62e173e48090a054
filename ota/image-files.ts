import { chmodSync, copyFileSync, mkdirSync, symlinkSync } from 'node:fs'
import path from 'node:path'

/**
 * What packaging/appliance/ puts into the appliance's root (docs/appliance.md): the first-boot units and their
 * scripts, the drop-ins that make it safe by default, and the system's own configuration files.
 */
export const APPLIANCE_FILES: readonly { from: string; to: string; mode: number }[] = [
  { from: 'apply-print-hub-txt.sh', to: 'usr/lib/print-hub-appliance/apply-print-hub-txt', mode: 0o755 },
  { from: 'install-ssh-keys.sh', to: 'usr/lib/print-hub-appliance/install-ssh-keys', mode: 0o755 },
  { from: 'grow-root.sh', to: 'usr/lib/print-hub-appliance/grow-root', mode: 0o755 },
  ...[
    'print-hub-txt.service',
    'print-hub-ssh-keys.service',
    'print-hub-ssh-host-keys.service',
    'print-hub-grow-root.service',
  ].map((unit) => ({ from: `units/${unit}`, to: `usr/lib/systemd/system/${unit}`, mode: 0o644 })),
  ...['print-hub.service', 'ssh.service', 'wpa_supplicant@wlan0.service'].map((unit) => ({
    from: `dropins/${unit}.conf`,
    to: `etc/systemd/system/${unit}.d/appliance.conf`,
    mode: 0o644,
  })),
  { from: 'dropins/journald.conf', to: 'etc/systemd/journald.conf.d/appliance.conf', mode: 0o644 },
  { from: 'dropins/sshd_config.conf', to: 'etc/ssh/sshd_config.d/appliance.conf', mode: 0o644 },
  { from: 'etc/fstab', to: 'etc/fstab', mode: 0o644 },
  { from: 'etc/wired.network', to: 'etc/systemd/network/10-wired.network', mode: 0o644 },
  { from: 'etc/wireless.network', to: 'etc/systemd/network/20-wireless.network', mode: 0o644 },
]

/** Read by dpkg for every package the image installs, so it is in place before apt runs. */
export const DPKG_NO_DOCS = { from: 'etc/dpkg-no-docs.cfg', to: 'etc/dpkg/dpkg.cfg.d/01-print-hub-no-docs' }

/** Units enabled in the image (`systemctl enable` in the root). ssh.service is enabled by its package. */
export const ENABLED_UNITS = [
  'print-hub-txt.service',
  'print-hub-ssh-keys.service',
  'print-hub-ssh-host-keys.service',
  'print-hub-grow-root.service',
  'systemd-networkd.service',
  'systemd-resolved.service',
  'systemd-timesyncd.service',
  'systemd-time-wait-sync.service',
]

/** Copies the appliance's files from `source` (packaging/appliance) into `root`. */
export function installApplianceFiles(source: string, root: string): void {
  for (const file of [...APPLIANCE_FILES, { ...DPKG_NO_DOCS, mode: 0o644 }]) {
    const target = path.join(root, file.to)
    mkdirSync(path.dirname(target), { recursive: true })
    copyFileSync(path.join(source, file.from), target)
    chmodSync(target, file.mode)
  }
  // wpa_supplicant for wlan0 starts when the device appears (udev tags network devices for systemd), not at
  // boot: a Pi without Wi-Fi, or a virtual machine, would otherwise wait for a wlan0 that never comes.
  const wants = path.join(root, 'etc/systemd/system/sys-subsystem-net-devices-wlan0.device.wants')
  mkdirSync(wants, { recursive: true })
  symlinkSync(
    '/usr/lib/systemd/system/wpa_supplicant@.service',
    path.join(wants, 'wpa_supplicant@wlan0.service'),
  )
}
