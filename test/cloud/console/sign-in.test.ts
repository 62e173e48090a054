import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CONSOLE_PASSWORD, type ConsoleHarness, startConsoleHarness } from './console-harness.ts'

describe('console sign-in and sign-out', () => {
  let harness: ConsoleHarness
  beforeEach(async () => {
    harness = await startConsoleHarness()
  })
  afterEach(() => harness.close())

  it('signs a user in through the form, shows who is signed in, and signs out ending the session row', async () => {
    const owner = await harness.signIn('owner')
    const home = await owner.get('/console')
    expect(home.statusCode).toBe(200)
    expect(home.body).toContain(`<span class="who">${owner.user.email}</span>`)

    const out = await owner.post('/console/sign-out')
    expect(out.statusCode).toBe(303)
    expect(out.headers.location).toBe('/console/sign-in?done=signed-out')
    expect(owner.cookies().size).toBe(0)
    const after = await owner.get('/console')
    expect(after.statusCode).toBe(303)
    expect(after.headers.location).toBe('/console/sign-in?next=%2Fconsole')
  })

  it('answers a wrong password and an unknown e-mail alike, with the same page', async () => {
    const owner = await harness.signIn('owner')
    const wrongPassword = await harness.anonymous().post('/console/sign-in', {
      email: owner.user.email,
      password: 'not the password',
    })
    const unknownEmail = await harness.anonymous().post('/console/sign-in', {
      email: 'nobody@example.test',
      password: CONSOLE_PASSWORD,
    })
    expect(wrongPassword.statusCode).toBe(422)
    expect(unknownEmail.statusCode).toBe(422)
    const message = (body: string) => /<p class="notice error" role="alert">([^<]*)<\/p>/.exec(body)?.[1]
    expect(message(wrongPassword.body)).toBe('Wrong e-mail or password.')
    expect(message(unknownEmail.body)).toBe('Wrong e-mail or password.')
  })
})
