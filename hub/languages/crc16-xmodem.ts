/**
 * CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final XOR (check value 0x31C3 for
 * "123456789"). ZPL II Programming Guide, ^GF / "Z64 encoding": the CRC of the Base64 text that follows
 * `:Z64:`, sent as four hexadecimal digits.
 */
export function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}
