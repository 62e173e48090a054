import type { RawLanguage } from './enums.ts'

/** A short text job: a title, one line at double size, and a note under it. */
export interface TextSlip {
  title: string
  emphasis: string
  note: string
}

/**
 * Text every printer's resident font prints and no language reads as a command: printable ASCII less `^` and
 * `~` (ZPL's command prefixes), `"` (TSPL's string quote) and `\` (TSPL's escape); anything else becomes `?`.
 */
export const slipText = (text: string): string => text.replace(/[^\x20-\x7e]|[\^~"\\]/g, '?')

/** `ESC @`, initialise (ESC/POS Command Reference). */
const ESCPOS_INITIALISE = '\x1b@'
/** `GS V 66 0`: feed to the cutter and cut partially (ESC/POS Command Reference). */
const ESCPOS_FEED_AND_CUT = '\x1dVB\x00'

/**
 * A text slip in the printer's own language with its resident fonts, no font download (the hub's pairing-code
 * slip, the console's test page). Every text is passed through `slipText`, so the bytes are ASCII.
 */
export function textSlip(language: RawLanguage, slip: TextSlip): Uint8Array {
  const title = slipText(slip.title)
  const emphasis = slipText(slip.emphasis)
  const note = slipText(slip.note)
  return new TextEncoder().encode(slipCommands(language, title, emphasis, note))
}

function slipCommands(language: RawLanguage, title: string, emphasis: string, note: string): string {
  switch (language) {
    case 'escpos':
      // ESC a 1: centred; GS ! 0x11: double width and height; GS ! 0: normal (ESC/POS Command Reference).
      return `${ESCPOS_INITIALISE}\x1ba\x01${title}\n\n\x1d!\x11${emphasis}\n\x1d!\x00\n${note}\n\n\n${ESCPOS_FEED_AND_CUT}`
    case 'zpl':
      // ^A0N,h,w: the scalable resident font at h×w dots (ZPL II Programming Guide).
      return `^XA^FO30,30^A0N,30,30^FD${title}^FS^FO30,80^A0N,70,70^FD${emphasis}^FS^FO30,170^A0N,25,25^FD${note}^FS^XZ\n`
    case 'tspl':
      // TEXT x,y,"font",rotation,x-mul,y-mul,"content" (TSPL/TSPL2 Programming Manual).
      return `CLS\r\nTEXT 30,30,"3",0,1,1,"${title}"\r\nTEXT 30,80,"4",0,2,2,"${emphasis}"\r\nTEXT 30,170,"2",0,1,1,"${note}"\r\nPRINT 1\r\n`
    case 'cpcl':
      // ! offset hres vres height qty, then TEXT font size x y (CPCL Programming Manual).
      return `! 0 200 200 260 1\r\nTEXT 4 0 30 30 ${title}\r\nTEXT 4 1 30 90 ${emphasis}\r\nTEXT 7 0 30 200 ${note}\r\nPRINT\r\n`
  }
}
