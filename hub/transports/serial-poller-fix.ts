/**
 * A wake-up that @serialport/bindings-cpp 13 loses, and what keeps it.
 *
 * On Linux the binding waits for a port to become readable or writable through one libuv poll handle per
 * port (`Poller`). Its native `poll(events)` adds `events` to the set it remembers but restarts the handle with
 * `events` alone (`uv_poll_start(handle, events)` in poller.cpp), so a wait started for one direction drops a
 * wait already under way for the other. A reader that re-arms "readable" while a long write is parked on
 * "writable" (the printer sent a status byte, or the first read's EAGAIN came late) leaves the write waiting
 * for a wake-up that never comes: the job stalls forever with the line idle.
 *
 * `keepBothWakeUps` makes every restart ask for the directions that still have a waiter too. The binding's own
 * re-arm after an event already does (it uses the remembered set).
 */

const READABLE = 0b01
const WRITABLE = 0b10

/** The binding's poller as bindings-cpp 13 has it (dist/poller.js): an EventEmitter with `poll(flags)`. */
interface BindingPoller {
  poll(eventFlag?: number): void
  listenerCount(event: 'readable' | 'writable'): number
}

/** Patches the poller of an opened node-serialport port, if it has one (the OS binding on Unix does). */
export function keepBothWakeUps(port: unknown): void {
  const poller = (port as { port?: { poller?: unknown } }).port?.poller as BindingPoller | undefined
  if (!poller || typeof poller.poll !== 'function' || typeof poller.listenerCount !== 'function') return
  const start = poller.poll.bind(poller)
  poller.poll = (eventFlag = 0) => {
    let waiting = eventFlag
    if (poller.listenerCount('readable') > 0) waiting |= READABLE
    if (poller.listenerCount('writable') > 0) waiting |= WRITABLE
    start(waiting)
  }
}
