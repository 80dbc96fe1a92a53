/* The C API of the vpcc WebAssembly module (plain exports, called from JavaScript).
 *
 * One decoder decodes one segment at a time, with video decoding done by the caller:
 *   1. vpcc_segment_buffer(d, n) → copy the segment's n bytes there → vpcc_load(d, n);
 *   2. for each of vpcc_stream_count(d) video sub-bitstreams, vpcc_stream(d, i) describes it
 *      (struct vpcc_stream_info below) and points at its coded NAL units (4-byte big-endian
 *      length prefixes, as V3C stores them); decode it (WebCodecs, or the optional HEVC module
 *      of api_hevc.h) and hand every picture in output order to vpcc_put_picture (planes anywhere in wasm memory, e.g. in
 *      vpcc_picture_buffer(d, bytes), which is reused from call to call);
 *   3. once vpcc_frame_ready(d, f), vpcc_reconstruct(d, f, flags), read vpcc_point_count,
 *      vpcc_positions (int16 xyz) and vpcc_colors (uint8 rgb) — views into wasm memory valid
 *      until the next reconstruct, load or release of the frame — then vpcc_release_frame(d, f)
 *      frees its pictures and its points.
 * Every function returning int returns VPCC_OK or an error code; vpcc_last_error(d) says what
 * was wrong. Functions returning a pointer return 0 on error. No function aborts on bad input.
 */
#ifndef VPCC_API_H
#define VPCC_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum vpcc_status {
  VPCC_OK = 0,
  VPCC_ERR_ARGUMENT = 1,   /* bad handle, index or size */
  VPCC_ERR_BITSTREAM = 2,  /* malformed or unsupported V-PCC data, or pictures that do not fit it */
  VPCC_ERR_NOT_READY = 3,  /* pictures of the frame still missing */
  VPCC_ERR_MEMORY = 4,     /* allocation failed */
  VPCC_ERR_INTERNAL = 5
};

/* What a video sub-bitstream is; eleven uint32 in this order (read from JS through HEAPU32). */
struct vpcc_stream_info {
  uint32_t sequence;           /* coded sequence in the segment */
  uint32_t component;          /* 0 occupancy, 1 geometry, 2 attribute */
  uint32_t map;                /* map index (0 when the maps are interleaved in the stream) */
  uint32_t pictures_per_frame; /* 2 when two maps alternate in the stream */
  uint32_t codec;              /* 0 AVC, 1 HEVC */
  uint32_t bit_depth;          /* nominal bit depth of the component */
  uint32_t picture_count;      /* pictures expected, in output order */
  uint32_t first_frame;        /* segment-wide index of the sequence's first frame */
  uint32_t data;               /* address of the coded NAL units in wasm memory */
  uint32_t size;               /* their size in bytes */
  uint32_t auxiliary;          /* 1: an auxiliary video (raw points), of its own picture size */
};

/* Chroma layouts of vpcc_put_picture. */
#define VPCC_CHROMA_420 0u            /* U and V planes, ceil(w/2) × ceil(h/2) */
#define VPCC_CHROMA_444 1u            /* U and V planes, w × h */
#define VPCC_CHROMA_420_INTERLEAVED 2u /* one plane of U,V pairs (NV12), ceil(w/2) pairs × ceil(h/2); v unused */

/* Reconstruct flags. */
#define VPCC_SKIP_POSTPROCESSING 1u

typedef struct vpcc_decoder vpcc_decoder;

/* Threads this module decodes a frame with: 1 in the single-threaded module, 1 + helpers in
 * the threaded one (vpcc-mt); the player reports it with its decoder statistics. */
int vpcc_threads(void);

vpcc_decoder* vpcc_create(void);
void vpcc_destroy(vpcc_decoder* d);
int vpcc_last_status(const vpcc_decoder* d);
const char* vpcc_last_error(const vpcc_decoder* d);

/* The V3C level (ptl_level_idc, 30 × the level; 0: none) the manifest declares for the segments
 * loaded from now on: vpcc_load refuses one whose atlas exceeds that level's MaxAtlasSize
 * (VPCC_ERR_BITSTREAM), before anything sized by the atlas is allocated. An idc that names no
 * level is VPCC_ERR_ARGUMENT. */
int vpcc_set_manifest_level(vpcc_decoder* d, uint32_t level_idc);

uint8_t* vpcc_segment_buffer(vpcc_decoder* d, size_t size);
int vpcc_load(vpcc_decoder* d, size_t size);
uint32_t vpcc_frame_count(const vpcc_decoder* d);
uint32_t vpcc_stream_count(const vpcc_decoder* d);
const struct vpcc_stream_info* vpcc_stream(vpcc_decoder* d, uint32_t stream);

uint8_t* vpcc_picture_buffer(vpcc_decoder* d, size_t size);
/* bytes_per_sample 1 or 2 (little-endian, value in the low decoded_bit_depth bits); strides in
 * samples (an interleaved U,V pair counts two); chroma_layout one of VPCC_CHROMA_*. */
int vpcc_put_picture(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t width, uint32_t height,
                     uint32_t bytes_per_sample, uint32_t decoded_bit_depth, uint32_t chroma_layout, const void* y,
                     uint32_t y_stride, const void* u, uint32_t u_stride, const void* v, uint32_t v_stride);
int vpcc_frame_ready(vpcc_decoder* d, uint32_t frame); /* 1 ready, 0 not, -1 error */
int vpcc_reconstruct(vpcc_decoder* d, uint32_t frame, uint32_t flags);
uint32_t vpcc_point_count(const vpcc_decoder* d);
const int16_t* vpcc_positions(const vpcc_decoder* d);
const uint8_t* vpcc_colors(const vpcc_decoder* d);
/* TMC2's frame checksum of the last reconstructed frame (32 hex digits). */
const char* vpcc_frame_md5(vpcc_decoder* d);
/* Frees a reconstructed frame's pictures, and its points (vpcc_positions, vpcc_colors) when it was the last reconstructed. */
int vpcc_release_frame(vpcc_decoder* d, uint32_t frame);

/* For a GPU reconstruction path. Each returns an array valid until the next call of the same
 * function (or load); its element count is vpcc_result_length(d) afterwards. */
uint32_t vpcc_result_length(const vpcc_decoder* d);
const int32_t* vpcc_patches(vpcc_decoder* d, uint32_t frame);         /* 20 int32 per patch (api_session.h) */
const uint32_t* vpcc_block_to_patch(vpcc_decoder* d, uint32_t frame); /* 0 or 1 + patch index, per block */
/* 12 int32: what a per-pixel reconstruction needs besides pictures and patches (api_session.h). */
const int32_t* vpcc_reconstruction_params(vpcc_decoder* d, uint32_t frame);
uint32_t vpcc_block_size(vpcc_decoder* d, uint32_t frame);
uint32_t vpcc_atlas_width(vpcc_decoder* d, uint32_t frame);
uint32_t vpcc_atlas_height(vpcc_decoder* d, uint32_t frame);
/* A stored picture's plane at the nominal bit depth (uint16 samples, row-major, no padding). */
const uint16_t* vpcc_plane(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t plane);
uint32_t vpcc_plane_width(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t plane);
uint32_t vpcc_plane_height(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t plane);

/* Bytes of the heap in use (malloc), for memory tests. */
size_t vpcc_heap_used(void);
/* The most bytes the allocator has ever taken from wasm memory (its peak footprint): in use plus
 * free chunks between them; wasm memory grows when it passes the memory's size. */
size_t vpcc_heap_peak(void);

#ifdef __cplusplus
}
#endif

#endif
