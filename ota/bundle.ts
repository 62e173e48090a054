import { readFileSync } from 'node:fs'
import path from 'node:path'
import { build, type Plugin } from 'esbuild'

/**
 * Packages loaded at run time from the package's node_modules, not bundled: native addons (built for the
 * build machine's architecture and Node ABI) and the packages that load them.
 */
export const EXTERNAL_PACKAGES = ['better-sqlite3', 'ghostscript4js', 'serialport', 'usb'] as const

/** The hub's entry points, bundled each into one ES module under lib/ (the worker beside the hub). */
const ENTRY_POINTS = {
  hub: 'hub/cli.ts',
  // hub/render/worker-process.ts runs this file with plain Node when it sits next to the bundle.
  'render-worker-process': 'hub/render/render-worker-process.ts',
}

/** The line of hub/agent.ts that names the version a hub reports; a release reports its own. */
const AGENT_VERSION_LINE = /^export const AGENT_VERSION = '[^']*'$/m

function releaseVersion(version: string): Plugin {
  return {
    name: 'release-version',
    setup(b) {
      b.onLoad({ filter: /[\\/]hub[\\/]agent\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8')
        if (!AGENT_VERSION_LINE.test(source))
          throw new Error('hub/agent.ts no longer declares AGENT_VERSION as ota/bundle.ts expects')
        return {
          contents: source.replace(
            AGENT_VERSION_LINE,
            `export const AGENT_VERSION = ${JSON.stringify(version)}`,
          ),
          loader: 'ts',
        }
      })
    },
  }
}

/** What the bundle is made of: the directories of the npm packages esbuild compiled into it (its metafile). */
export interface Bundle {
  packages: string[]
}

/**
 * Compiles the hub to JavaScript with esbuild: lib/hub.mjs and lib/render-worker-process.mjs under `outDir`.
 * CommonJS dependencies inside the bundle may call `require`; ES modules have none, so each bundle defines
 * one from its own URL.
 */
export async function bundleHub(root: string, outDir: string, version: string): Promise<Bundle> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outdir: path.join(outDir, 'lib'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    external: [...EXTERNAL_PACKAGES, '@serialport/*'],
    banner: {
      js: "import { createRequire as __printHubRequire } from 'node:module'; const require = __printHubRequire(import.meta.url);",
    },
    // Whitespace and syntax only (names stay readable in stack traces): the parsed source is held in memory,
    // and this takes 3 to 4 MB off the packaged hub's idle RSS (test/bench/hub-package.ts).
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'linked',
    logLevel: 'silent',
    plugins: [releaseVersion(version)],
    metafile: true,
  })
  if (result.errors.length > 0) throw new Error(result.errors.map((e) => e.text).join('\n'))
  const packages = new Set<string>()
  for (const input of Object.keys(result.metafile.inputs)) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (match) packages.add(path.join(root, match[1]!))
  }
  return { packages: [...packages].sort() }
}
