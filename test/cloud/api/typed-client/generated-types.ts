import { execFile } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import ts from 'typescript'

const REPO = path.resolve(import.meta.dirname, '../../../..')
export const BACKEND_FILE = path.join(import.meta.dirname, 'backend.ts')
/** The docs' till that falls back to its hub's LAN API (docs/lan-printing.md), checked the same way. */
export const TILL_EXAMPLE_FILE = path.join(REPO, 'docs/examples/till-fallback.ts')

/**
 * Writes `openapi.ts` in `dir`: the types openapi-typescript generates from `document`, with binary strings
 * as `Blob` (its documented option for multipart uploads).
 */
export async function generateTypes(document: OpenAPI3, dir: string): Promise<string> {
  const blob = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'))
  const ast = await openapiTS(document, {
    transform: (schema) => ('format' in schema && schema.format === 'binary' ? blob : undefined),
  })
  const file = path.join(dir, 'openapi.ts')
  writeFileSync(file, astToString(ast))
  return file
}

/**
 * Type-checks backend.ts against the generated types with the project's compiler options: a tsconfig in
 * `dir` maps the module `print-hub-openapi` to them. Resolves with tsc's exit code and output.
 */
export async function typeCheckBackend(
  dir: string,
  typesFile: string,
): Promise<{ code: number; output: string }> {
  const config = {
    extends: path.join(REPO, 'tsconfig.json'),
    compilerOptions: {
      paths: { 'print-hub-openapi': [typesFile] },
      typeRoots: [path.join(REPO, 'node_modules/@types')],
    },
    include: [],
    files: [BACKEND_FILE, TILL_EXAMPLE_FILE],
  }
  const configFile = path.join(dir, 'tsconfig.json')
  writeFileSync(configFile, JSON.stringify(config, null, 2))
  try {
    const { stdout } = await promisify(execFile)(path.join(REPO, 'node_modules/.bin/tsc'), ['-p', configFile])
    return { code: 0, output: stdout }
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string }
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` }
  }
}

/** Every cast in a source file (`as T` but `as const`, `<T>x`, `x!`), every `any`, every `@ts-` directive. */
export function escapeHatches(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    const isConst = ts.isAsExpression(node) && node.type.getText(source) === 'const'
    if (
      (ts.isAsExpression(node) && !isConst) ||
      ts.isTypeAssertionExpression(node) ||
      ts.isNonNullExpression(node) ||
      node.kind === ts.SyntaxKind.AnyKeyword
    ) {
      found.push(node.getText(source))
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return [...found, ...(source.text.match(/@ts-\w+/g) ?? [])]
}
