/** The media a printer of one language takes unless its URI says otherwise. */
export interface MediaDefaults {
  dpi: number
  width: { min: number; max: number }
  /** null: continuous media (a receipt roll). */
  height: { min: number; max: number } | null
  /** The label loaded unless the URI states one; null for continuous media. */
  label: { width: number; height: number } | null
  /** How wide the head prints on paper `paperWidthMm` wide, in mm (a URI's head_dots= says otherwise). */
  printableWidthMm(paperWidthMm: number): number
}

/** The longest label range assumed when a URI states none; deliberately generous. */
export const LABEL_LENGTH = { min: 10, max: 1000 }

/**
 * ZPL, TSPL and CPCL label printers: 203 dpi desktop models taking 25 to 104 mm (4 inch) wide labels, with
 * a head as wide as the widest label (832 dots at 203 dpi), loaded with 4 × 6 in shipping labels unless the
 * URI states width_mm= and height_mm=. The length range is deliberately generous; pass height_mm= to state
 * the longest label the printer takes.
 */
export const LABEL_DEFAULTS: MediaDefaults = {
  dpi: 203,
  width: { min: 25, max: 104 },
  height: LABEL_LENGTH,
  label: { width: 101.6, height: 152.4 },
  printableWidthMm: (paperWidthMm) => paperWidthMm,
}

/** Dots across a head `mm` wide, rounded up to whole bytes as heads are built (832 dots for 104 mm at 203 dpi). */
export function headDotsOf(mm: number, dpi: number): number {
  return Math.ceil((mm * dpi) / 25.4 / 8) * 8
}
