/* The C API of the optional HEVC module (vpcc-hevc.mjs + vpcc-hevc.wasm): libde265 (LGPL-3.0)
 * and this thin layer, built as a WebAssembly module of its own so that the vpcc core module
 * (api.h, MIT) carries no LGPL code. The player loads it only for an HEVC video sub-bitstream
 * its browser's WebCodecs cannot decode.
 *
 * One handle decodes one video sub-bitstream:
 *   1. vpcc_hevc_input(h, n) → copy the stream's n bytes there (4-byte big-endian length-prefixed
 *      NAL units, as vpcc_stream() of the core module points at) → vpcc_hevc_start(h, n);
 *   2. while vpcc_hevc_next(h) returns 1, vpcc_hevc_current_picture(h) describes the next picture in
 *      output order, its planes valid until the next vpcc_hevc_next; copy them into the core
 *      module and hand them over with vpcc_put_picture (the fields below are its arguments).
 * Functions returning int give VPCC_OK / 1-or-0 or a negative value on error; then
 * vpcc_hevc_last_status (a vpcc_status of api.h) and vpcc_hevc_last_error say what was wrong.
 */
#ifndef VPCC_API_HEVC_H
#define VPCC_API_HEVC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A decoded picture; eleven uint32 in this order (read from JS through HEAPU32). */
struct vpcc_hevc_picture {
  uint32_t width;            /* luma samples */
  uint32_t height;
  uint32_t chroma444;        /* 0: 4:2:0, 1: 4:4:4 */
  uint32_t bit_depth;        /* the coded bit depth (luma and chroma alike) */
  uint32_t bytes_per_sample; /* 1, or 2 (little-endian) above 8 bits */
  uint32_t y, y_stride;      /* address in this module's memory, stride in samples */
  uint32_t u, u_stride;
  uint32_t v, v_stride;
};

typedef struct vpcc_hevc vpcc_hevc;

vpcc_hevc* vpcc_hevc_create(void);
void vpcc_hevc_destroy(vpcc_hevc* h);
int vpcc_hevc_last_status(const vpcc_hevc* h);
const char* vpcc_hevc_last_error(const vpcc_hevc* h);

/* Where to copy the coded stream (size bytes); 0 on error. */
uint8_t* vpcc_hevc_input(vpcc_hevc* h, size_t size);
/* Starts decoding the size bytes copied to vpcc_hevc_input. Once per handle. */
int vpcc_hevc_start(vpcc_hevc* h, size_t size);
/* Decodes up to the next picture: 1 a picture is ready, 0 the stream is done, -1 error. */
int vpcc_hevc_next(vpcc_hevc* h);
/* The picture the last vpcc_hevc_next returned 1 for; 0 when there is none. */
const struct vpcc_hevc_picture* vpcc_hevc_current_picture(const vpcc_hevc* h);

#ifdef __cplusplus
}
#endif

#endif
