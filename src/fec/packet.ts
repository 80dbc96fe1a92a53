/**
 * The header of a serialized RaptorQ encoding packet (RFC 6330's FEC payload ID, as the `raptorq`
 * crate writes it): source block number (u8) then encoding symbol id (u24, big-endian), then the
 * symbol. The transport reads it to sort arriving datagrams; the decoder, to tell source symbols
 * from repair symbols.
 */

/** Source block number (SBN) of a serialized encoding packet. */
export function packetSourceBlock(packet: Uint8Array): number {
  return packet[0];
}

/** Encoding symbol id (ESI) of a serialized encoding packet. */
export function packetSymbolId(packet: Uint8Array): number {
  return (packet[1] << 16) | (packet[2] << 8) | packet[3];
}
