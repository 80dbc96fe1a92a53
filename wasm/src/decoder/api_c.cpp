// The C API (vpcc/api.h) over DecodeSession: exceptions become status codes and messages here,
// so nothing thrown inside the library ever crosses into JavaScript.
#include "vpcc/api.h"

#include <cxxabi.h>
#include <malloc.h>

#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <typeinfo>
#include <vector>

#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"
#include "common/parallel.h"

struct vpcc_decoder {
  vpcc::DecodeSession session;
  int status = VPCC_OK;
  std::string error;
  std::vector<uint8_t> segment;         // input bytes (reused)
  std::vector<uint8_t> pictureScratch;  // where callers copy decoded planes (reused)
  std::vector<vpcc_stream_info> streams;
  std::vector<vpcc::PatchRecord> patches;
  std::vector<uint32_t> blockToPatch;
  vpcc::ReconstructionParams params{};
  std::string md5;
  uint32_t resultLength = 0;
};

namespace {

#if defined(__EMSCRIPTEN_PTHREADS__)
/// The threaded module's status and message for the exception being handled. Its compiler
/// (clang 14 under Emscripten 3.1.6) cannot match typed catch clauses when wasm exceptions meet
/// pthreads — its landing pads write the unwinder's context where the threaded runtime does not
/// read it, so `catch (const T&)` never matches and the exception escapes to JavaScript — but
/// `catch (...)` works. So the type is told by its type_info here, and the message read from
/// the exceptions the library and the standard library throw (all single inheritance from
/// std::exception, whose subobject is then the thrown object's address).
void reportCurrentException(vpcc_decoder* d) {
  const std::type_info* type = abi::__cxa_current_exception_type();
  void* thrown = abi::__cxa_current_primary_exception();
  static const std::type_info* const withMessage[] = {
      &typeid(vpcc::ParseError),   &typeid(std::runtime_error), &typeid(std::logic_error),
      &typeid(std::length_error),  &typeid(std::out_of_range),  &typeid(std::invalid_argument),
      &typeid(std::domain_error),  &typeid(std::range_error),   &typeid(std::overflow_error),
      &typeid(std::system_error)};
  std::string message = "unknown exception";
  for (const std::type_info* known : withMessage)
    if (type && thrown && *type == *known) message = static_cast<const std::exception*>(thrown)->what();
  if (type && (*type == typeid(std::bad_alloc) || *type == typeid(std::bad_array_new_length))) {
    d->status = VPCC_ERR_MEMORY;
    d->error = "out of memory";
  } else {
    d->status = type && *type == typeid(vpcc::ParseError) ? VPCC_ERR_BITSTREAM : VPCC_ERR_INTERNAL;
    d->error = message;
  }
  if (thrown) abi::__cxa_decrement_exception_refcount(thrown);
}
#endif

/// Runs `body`, turning any exception into the decoder's status and message.
template <typename Body>
int guarded(vpcc_decoder* d, Body&& body) {
  if (!d) return VPCC_ERR_ARGUMENT;
  try {
    body();
    d->status = VPCC_OK;
    d->error.clear();
#if defined(__EMSCRIPTEN_PTHREADS__)
  } catch (...) {
    reportCurrentException(d);
  }
#else
  } catch (const vpcc::ParseError& e) {
    d->status = VPCC_ERR_BITSTREAM;
    d->error = e.what();
  } catch (const std::bad_alloc&) {
    d->status = VPCC_ERR_MEMORY;
    d->error = "out of memory";
  } catch (const std::exception& e) {
    d->status = VPCC_ERR_INTERNAL;
    d->error = e.what();
  }
#endif
  return d->status;
}

int fail(vpcc_decoder* d, int status, const std::string& message) {
  d->status = status;
  d->error = message;
  return status;
}

}  // namespace

extern "C" {

int vpcc_threads(void) { return int(vpcc::parallel::helpers()) + 1; }

vpcc_decoder* vpcc_create(void) { return new (std::nothrow) vpcc_decoder(); }

void vpcc_destroy(vpcc_decoder* d) { delete d; }

int vpcc_last_status(const vpcc_decoder* d) { return d ? d->status : VPCC_ERR_ARGUMENT; }

const char* vpcc_last_error(const vpcc_decoder* d) { return d ? d->error.c_str() : "no decoder"; }

int vpcc_set_manifest_level(vpcc_decoder* d, uint32_t level_idc) {
  if (!d) return VPCC_ERR_ARGUMENT;
  if (level_idc != 0 && (level_idc > 255 || vpcc::levelMaxAtlasSize(uint8_t(level_idc)) == 0))
    return fail(d, VPCC_ERR_ARGUMENT, "level idc " + std::to_string(level_idc) + " names no V3C level");
  d->session.setManifestLevel(uint8_t(level_idc));
  d->status = VPCC_OK;
  d->error.clear();
  return VPCC_OK;
}

uint8_t* vpcc_segment_buffer(vpcc_decoder* d, size_t size) {
  uint8_t* out = nullptr;
  guarded(d, [&] {
    d->segment.resize(size);
    out = d->segment.data();
  });
  return out;
}

int vpcc_load(vpcc_decoder* d, size_t size) {
  if (d && size > d->segment.size()) return fail(d, VPCC_ERR_ARGUMENT, "load size exceeds the segment buffer");
  return guarded(d, [&] {
    d->streams.clear();
    d->session.load(d->segment.data(), size);
    for (const auto& s : d->session.streams())
      d->streams.push_back({s.sequence, uint32_t(s.component), s.map, s.picturesPerFrame,
                            s.codec == vpcc::VideoCodec::Hevc ? 1u : 0u, s.bitDepth, s.pictureCount, s.firstFrame,
                            uint32_t(reinterpret_cast<uintptr_t>(s.bitstream->data.data())),
                            uint32_t(s.bitstream->data.size()), s.auxiliary ? 1u : 0u});
  });
}

uint32_t vpcc_frame_count(const vpcc_decoder* d) { return d ? d->session.frameCount() : 0; }

uint32_t vpcc_stream_count(const vpcc_decoder* d) { return d ? uint32_t(d->streams.size()) : 0; }

const vpcc_stream_info* vpcc_stream(vpcc_decoder* d, uint32_t stream) {
  if (!d) return nullptr;
  if (stream >= d->streams.size()) {
    fail(d, VPCC_ERR_ARGUMENT, "no video stream " + std::to_string(stream));
    return nullptr;
  }
  return &d->streams[stream];
}

uint8_t* vpcc_picture_buffer(vpcc_decoder* d, size_t size) {
  uint8_t* out = nullptr;
  guarded(d, [&] {
    if (d->pictureScratch.size() < size) d->pictureScratch.resize(size);
    out = d->pictureScratch.data();
  });
  return out;
}

int vpcc_put_picture(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t width, uint32_t height,
                     uint32_t bytes_per_sample, uint32_t decoded_bit_depth, uint32_t chroma_layout, const void* y,
                     uint32_t y_stride, const void* u, uint32_t u_stride, const void* v, uint32_t v_stride) {
  if (d && bytes_per_sample != 1 && bytes_per_sample != 2)
    return fail(d, VPCC_ERR_ARGUMENT, "bytes per sample must be 1 or 2");
  if (d && decoded_bit_depth > 16) return fail(d, VPCC_ERR_ARGUMENT, "decoded bit depth above 16");
  if (d && chroma_layout > VPCC_CHROMA_420_INTERLEAVED) return fail(d, VPCC_ERR_ARGUMENT, "unknown chroma layout");
  return guarded(d, [&] {
    vpcc::PictureInput in;
    in.width = width;
    in.height = height;
    in.sixteenBitSamples = bytes_per_sample == 2;
    in.decodedBitDepth = uint8_t(decoded_bit_depth);
    in.chroma444 = chroma_layout == VPCC_CHROMA_444;
    in.chromaInterleaved = chroma_layout == VPCC_CHROMA_420_INTERLEAVED;
    in.planes[0] = y;
    in.planes[1] = u;
    in.planes[2] = v;
    in.strides[0] = y_stride;
    in.strides[1] = u_stride;
    in.strides[2] = v_stride;
    d->session.putPicture(stream, index, in);
  });
}

int vpcc_frame_ready(vpcc_decoder* d, uint32_t frame) {
  bool ready = false;
  if (guarded(d, [&] { ready = d->session.frameReady(frame); }) != VPCC_OK) return -1;
  return ready ? 1 : 0;
}

int vpcc_reconstruct(vpcc_decoder* d, uint32_t frame, uint32_t flags) {
  if (d && frame < d->session.frameCount() && !d->session.frameReady(frame))
    return fail(d, VPCC_ERR_NOT_READY, "pictures of frame " + std::to_string(frame) + " are missing");
  return guarded(d, [&] { d->session.reconstruct(frame, (flags & VPCC_SKIP_POSTPROCESSING) == 0); });
}

uint32_t vpcc_point_count(const vpcc_decoder* d) { return d ? uint32_t(d->session.lastFrame().size()) : 0; }

const int16_t* vpcc_positions(const vpcc_decoder* d) { return d ? d->session.lastFrame().positions.data() : nullptr; }

const uint8_t* vpcc_colors(const vpcc_decoder* d) { return d ? d->session.lastFrame().colors.data() : nullptr; }

const char* vpcc_frame_md5(vpcc_decoder* d) {
  if (guarded(d, [&] { d->md5 = vpcc::frameMd5(d->session.lastFrame()); }) != VPCC_OK) return nullptr;
  return d->md5.c_str();
}

int vpcc_release_frame(vpcc_decoder* d, uint32_t frame) {
  return guarded(d, [&] { d->session.releaseFrame(frame); });
}

uint32_t vpcc_result_length(const vpcc_decoder* d) { return d ? d->resultLength : 0; }

const int32_t* vpcc_patches(vpcc_decoder* d, uint32_t frame) {
  if (guarded(d, [&] {
        d->patches = d->session.patches(frame);
        d->resultLength = uint32_t(d->patches.size());
      }) != VPCC_OK)
    return nullptr;
  return reinterpret_cast<const int32_t*>(d->patches.data());
}

const uint32_t* vpcc_block_to_patch(vpcc_decoder* d, uint32_t frame) {
  if (guarded(d, [&] {
        d->blockToPatch = d->session.blockToPatch(frame);
        d->resultLength = uint32_t(d->blockToPatch.size());
      }) != VPCC_OK)
    return nullptr;
  return d->blockToPatch.data();
}

const int32_t* vpcc_reconstruction_params(vpcc_decoder* d, uint32_t frame) {
  if (guarded(d, [&] {
        d->params = d->session.reconstructionParams(frame);
        d->resultLength = 12;
      }) != VPCC_OK)
    return nullptr;
  return reinterpret_cast<const int32_t*>(&d->params);
}

uint32_t vpcc_block_size(vpcc_decoder* d, uint32_t frame) {
  uint32_t out = 0;
  guarded(d, [&] { out = d->session.blockSize(frame); });
  return out;
}

uint32_t vpcc_atlas_width(vpcc_decoder* d, uint32_t frame) {
  uint32_t out = 0;
  guarded(d, [&] { out = d->session.atlasWidth(frame); });
  return out;
}

uint32_t vpcc_atlas_height(vpcc_decoder* d, uint32_t frame) {
  uint32_t out = 0;
  guarded(d, [&] { out = d->session.atlasHeight(frame); });
  return out;
}

static const vpcc::Plane* planeOf(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t plane) {
  const vpcc::Plane* out = nullptr;
  guarded(d, [&] {
    if (plane > 2) throw vpcc::ParseError("plane index above 2");
    out = &d->session.picture(stream, index).planes[plane];
  });
  return out;
}

const uint16_t* vpcc_plane(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t plane) {
  const vpcc::Plane* p = planeOf(d, stream, index, plane);
  return p ? p->samples.data() : nullptr;
}

uint32_t vpcc_plane_width(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t plane) {
  const vpcc::Plane* p = planeOf(d, stream, index, plane);
  return p ? p->width : 0;
}

uint32_t vpcc_plane_height(vpcc_decoder* d, uint32_t stream, uint32_t index, uint32_t plane) {
  const vpcc::Plane* p = planeOf(d, stream, index, plane);
  return p ? p->height : 0;
}

size_t vpcc_heap_used(void) { return size_t(mallinfo().uordblks); }

size_t vpcc_heap_peak(void) { return size_t(mallinfo().usmblks); }

}  // extern "C"
