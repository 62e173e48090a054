/** The media a printer of one language takes unless its URI says otherwise. */
export interface MediaDefaults {
  dpi: number
  width: { min: number; max: number }
  /** null: continuous media (a receipt roll). */
  height: { min: number; max: number } | null
}

/** The longest label range assumed when a URI states none; deliberately generous. */
export const LABEL_LENGTH = { min: 10, max: 1000 }

/**
 * ZPL, TSPL and CPCL label printers: 203 dpi desktop models taking 25 to 104 mm (4 inch) wide labels. The
 * length range is deliberately generous; pass height_mm= to state the longest label the printer takes.
 */
export const LABEL_DEFAULTS: MediaDefaults = { dpi: 203, width: { min: 25, max: 104 }, height: LABEL_LENGTH }
