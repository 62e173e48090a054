import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { newWebhookSecret, rememberingOpen, webhookSecretBox } from '../../../cloud/webhooks/secret-box.ts'

describe('webhook secrets at rest', () => {
  const box = webhookSecretBox(randomBytes(32))

  it('opens what it sealed for the same endpoint only', () => {
    const secret = newWebhookSecret()
    const sealed = box.seal(secret, 'endpoint-a')
    expect(sealed).toMatch(/^v1\./)
    expect(sealed).not.toContain(secret.slice('whsec_'.length))
    expect(box.open(sealed, 'endpoint-a')).toBe(secret)
    expect(() => box.open(sealed, 'endpoint-b')).toThrow()
    expect(() => webhookSecretBox(randomBytes(32)).open(sealed, 'endpoint-a')).toThrow()
  })

  it('remembers the secrets it opened, up to its bound, and never one that did not open', () => {
    const opens: string[] = []
    const counting = {
      open(sealed: string, endpointId: string) {
        opens.push(endpointId)
        return box.open(sealed, endpointId)
      },
    }
    const open = rememberingOpen(counting, 2)
    const [a, b, c] = ['endpoint-a', 'endpoint-b', 'endpoint-c']
    const secrets = { [a]: newWebhookSecret(), [b]: newWebhookSecret(), [c]: newWebhookSecret() }
    const sealed = (id: string) => box.seal(secrets[id]!, id)
    const [sealedA, sealedB, sealedC] = [sealed(a), sealed(b), sealed(c)]

    expect(open(sealedA, a)).toBe(secrets[a])
    expect(open(sealedA, a)).toBe(secrets[a])
    expect(opens).toStrictEqual([a])
    // Another endpoint's row holding a's sealed secret does not open, then or later.
    expect(() => open(sealedA, b)).toThrow()
    expect(() => open(sealedA, b)).toThrow()
    expect(opens).toStrictEqual([a, b, b])
    // A rotated secret is another sealed text: opened anew.
    const rotated = newWebhookSecret()
    expect(open(box.seal(rotated, a), a)).toBe(rotated)
    expect(opens).toStrictEqual([a, b, b, a])
    // Over the bound the one opened longest ago goes.
    expect(open(sealedB, b)).toBe(secrets[b])
    expect(open(sealedC, c)).toBe(secrets[c])
    expect(open(sealedA, a)).toBe(secrets[a])
    expect(opens).toStrictEqual([a, b, b, a, b, c, a])
  })
})
