// Parameter lengths of the fixed-length ESC/POS commands, from the Epson "ESC/POS Command Reference"
// (download4.epson.biz/sec_pubs/pos/reference_en/escpos/). Commands with data of their own length (images,
// bar codes, GS ( ...) are handled in escpos.ts.

/** Parameter bytes after `ESC n` for fixed-length commands. */
export const ESC_FIXED: Record<number, number> = {
  12: 0, // ESC FF print data in page mode
  32: 1, // ESC SP right-side character spacing
  33: 1, // ESC ! print mode
  36: 2, // ESC $ absolute print position
  37: 1, // ESC % user-defined character set
  45: 1, // ESC - underline
  50: 0, // ESC 2 default line spacing
  51: 1, // ESC 3 line spacing
  60: 0, // ESC < return home
  61: 1, // ESC = select peripheral device
  63: 1, // ESC ? cancel user-defined character
  64: 0, // ESC @ initialize
  69: 1, // ESC E emphasized
  71: 1, // ESC G double-strike
  74: 1, // ESC J print and feed
  75: 1, // ESC K print and reverse feed
  76: 0, // ESC L page mode
  77: 1, // ESC M character font
  82: 1, // ESC R international character set
  83: 0, // ESC S standard mode
  84: 1, // ESC T print direction in page mode
  85: 1, // ESC U unidirectional printing
  86: 1, // ESC V 90° rotation
  87: 8, // ESC W print area in page mode
  92: 2, // ESC \ relative print position
  97: 1, // ESC a justification
  99: 2, // ESC c 0/1/3/4/5 n paper type, sensors, panel buttons
  100: 1, // ESC d print and feed n lines
  101: 1, // ESC e print and reverse feed n lines
  102: 2, // ESC f cut sheet wait time
  105: 0, // ESC i partial cut
  109: 0, // ESC m partial cut
  112: 3, // ESC p generate pulse
  114: 1, // ESC r print color
  116: 1, // ESC t character code table
  117: 1, // ESC u transmit peripheral status
  118: 0, // ESC v transmit paper sensor status
  123: 1, // ESC { upside-down
}

/** Parameter bytes after `GS n` for fixed-length commands. */
export const GS_FIXED: Record<number, number> = {
  33: 1, // GS ! character size
  36: 2, // GS $ absolute vertical position
  47: 1, // GS / print downloaded bit image
  58: 0, // GS : macro definition
  66: 1, // GS B white/black reverse
  69: 1, // GS E head control method
  72: 1, // GS H HRI position
  73: 1, // GS I transmit printer ID
  76: 2, // GS L left margin
  80: 2, // GS P motion units
  84: 1, // GS T beginning of line
  87: 2, // GS W print area width
  92: 2, // GS \ relative vertical position
  94: 3, // GS ^ execute macro
  97: 1, // GS a automatic status back
  98: 1, // GS b smoothing
  99: 0, // GS c print counter
  102: 1, // GS f HRI font
  104: 1, // GS h bar code height
  106: 1, // GS j ink automatic status back
  114: 1, // GS r transmit status
  119: 1, // GS w bar code width
}

/** Parameter bytes after `FS n` for fixed-length commands. */
export const FS_FIXED: Record<number, number> = {
  33: 1, // FS ! Kanji print mode
  38: 0, // FS & Kanji mode on
  45: 1, // FS - Kanji underline
  46: 0, // FS . Kanji mode off
  63: 2, // FS ? cancel user-defined Kanji
  67: 1, // FS C Kanji code system
  83: 2, // FS S Kanji spacing
  87: 1, // FS W Kanji quadruple size
  112: 2, // FS p print NV bit image
}
