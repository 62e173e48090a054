import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'

export const DESKTOP = { width: 1280, height: 800 }
export const PHONE = { width: 390, height: 844 }

/**
 * What a page reported that it should not have: console errors (Chromium reports a CSP violation as one, e.g.
 * "Executing inline script violates the following Content Security Policy directive ...") and uncaught
 * exceptions. A page the test opens on purpose with an error status (403, 404) makes Chromium log "Failed to
 * load resource" for that document: `expectErrorStatus` exempts that one line for that URL, nothing else (the
 * pages name their icon, so Chromium asks for no /favicon.ico).
 */
export class PageProblems {
  private readonly problems: string[] = []
  private readonly errorStatusUrls = new Set<string>()

  constructor(page: Page) {
    page.on('console', (message) => {
      if (message.type() !== 'error') return
      const url = message.location().url
      const expected = this.errorStatusUrls.has(url)
      if (/^Failed to load resource/.test(message.text()) && expected) return
      this.problems.push(`${message.text()} (${url})`)
    })
    page.on('pageerror', (error) => this.problems.push(`uncaught: ${error.message}`))
  }

  expectErrorStatus(url: string): void {
    this.errorStatusUrls.add(url)
  }

  list(): string[] {
    return [...this.problems]
  }
}

/**
 * The visible form controls of the page that no label names: no `<label for>` or wrapping label
 * (HTMLInputElement.labels), no aria-label, no aria-labelledby. Buttons are named by their text.
 */
export async function unlabelledControls(page: Page): Promise<string[]> {
  // A string, run in the page (this project's TypeScript has no DOM types).
  return page.evaluate<string[]>(`[...document.querySelectorAll('input, select, textarea')]
    .filter((control) => !['hidden', 'submit', 'button', 'reset'].includes(control.type) && control.checkVisibility())
    .filter((control) => control.labels.length === 0
      && !control.getAttribute('aria-label') && !control.getAttribute('aria-labelledby'))
    .map((control) => control.outerHTML)`)
}

/**
 * Screenshots of the page as it is at desktop and at phone width, `test-artifacts/console/<name>-desktop.png`
 * and `-phone.png`; returns how wide the document is at phone width (wider than the screen means a sideways
 * scroll). The page is left at desktop width.
 */
export async function screenshotBothWidths(page: Page, dir: string, name: string): Promise<number> {
  mkdirSync(dir, { recursive: true })
  await page.setViewportSize(DESKTOP)
  await page.screenshot({ path: path.join(dir, `${name}-desktop.png`), fullPage: true })
  await page.setViewportSize(PHONE)
  const width = await page.evaluate<number>('document.documentElement.scrollWidth')
  await page.screenshot({ path: path.join(dir, `${name}-phone.png`), fullPage: true })
  await page.setViewportSize(DESKTOP)
  return width
}
