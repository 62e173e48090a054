import { describe, expect, it } from 'vitest'
import { chooseRelease, shouldTell } from '../../../cloud/releases/release-choice.ts'
import type { HubUpdate } from '../../../protocol/hub-messages.ts'

const CATALOG = new Set(['1.0.0', '1.1.0', '1.2.0'])
const at = '2026-03-01T00:00:00.000Z'
const update = (version: string, status: HubUpdate['status']): HubUpdate => ({ version, status, at })

describe('which release a hub runs', () => {
  const release = (version: string) => ({ version, released_at: at, notes: '', installers: [] })
  const catalog = (...versions: string[]) => ({
    current: release(versions[0]!),
    releases: versions.map(release),
  })

  it('a hub pin first, then the account pin, then the catalog’s current release', () => {
    const listed = catalog('1.2.0', '1.1.0', '1.0.0')
    expect(chooseRelease({ hub_pin: '1.0.0', account_pin: '1.1.0' }, listed)).toEqual({
      version: '1.0.0',
      source: 'hub_pin',
    })
    expect(chooseRelease({ hub_pin: null, account_pin: '1.1.0' }, listed)).toEqual({
      version: '1.1.0',
      source: 'account_pin',
    })
    expect(chooseRelease({ hub_pin: null, account_pin: null }, listed)).toEqual({
      version: '1.2.0',
      source: 'catalog',
    })
  })

  it('passes over a pin to a release the catalog no longer lists (withdrawn, below the floor)', () => {
    expect(chooseRelease({ hub_pin: '1.0.0', account_pin: '1.1.0' }, catalog('1.2.0', '1.1.0'))).toEqual({
      version: '1.1.0',
      source: 'account_pin',
    })
    expect(chooseRelease({ hub_pin: '1.0.0', account_pin: '1.1.0' }, catalog('1.2.0'))).toEqual({
      version: '1.2.0',
      source: 'catalog',
    })
  })
})

describe('whether the hub is told', () => {
  const choice = { version: '1.2.0', source: 'catalog' } as const
  it('yes when it runs another release and has not tried this one', () => {
    expect(shouldTell(choice, { running: '1.1.0', updatable: true, update: null }, CATALOG)).toBe(true)
    // An older update that went well, or one to another version that failed, does not hold it back.
    expect(
      shouldTell(
        choice,
        { running: '1.1.0', updatable: true, update: update('1.1.0', 'succeeded') },
        CATALOG,
      ),
    ).toBe(true)
    expect(
      shouldTell(choice, { running: '1.1.0', updatable: true, update: update('1.1.5', 'failed') }, CATALOG),
    ).toBe(true)
    // Pinned back to an older release: a downgrade is an update like another.
    expect(
      shouldTell(
        { version: '1.0.0', source: 'hub_pin' },
        { running: '1.2.0', updatable: true, update: null },
        CATALOG,
      ),
    ).toBe(true)
  })
  it('no when it cannot update itself (an older release, or a hub run from a checkout)', () => {
    expect(shouldTell(choice, { running: '1.1.0', updatable: false, update: null }, CATALOG)).toBe(false)
  })
  it('no when it runs it already', () => {
    expect(
      shouldTell(
        choice,
        { running: '1.2.0', updatable: true, update: update('1.2.0', 'succeeded') },
        CATALOG,
      ),
    ).toBe(false)
  })
  it('no while its update to it is under way, and never again once that update failed', () => {
    expect(
      shouldTell(
        choice,
        { running: '1.1.0', updatable: true, update: update('1.2.0', 'in_progress') },
        CATALOG,
      ),
    ).toBe(false)
    expect(
      shouldTell(choice, { running: '1.1.0', updatable: true, update: update('1.2.0', 'failed') }, CATALOG),
    ).toBe(false)
    const installerRejected = { ...update('1.2.0', 'failed'), failure: 'installer_rejected' } as const
    expect(
      shouldTell(choice, { running: '1.1.0', updatable: true, update: installerRejected }, CATALOG),
    ).toBe(false)
  })
  it('yes again when only the download failed', () => {
    const downloadFailed = { ...update('1.2.0', 'failed'), failure: 'download_failed' } as const
    expect(shouldTell(choice, { running: '1.1.0', updatable: true, update: downloadFailed }, CATALOG)).toBe(
      true,
    )
  })
  it('no when the catalog does not list it (a pin to a release since withdrawn)', () => {
    expect(
      shouldTell(
        { version: '0.9.0', source: 'hub_pin' },
        { running: '1.1.0', updatable: true, update: null },
        CATALOG,
      ),
    ).toBe(false)
  })
})
