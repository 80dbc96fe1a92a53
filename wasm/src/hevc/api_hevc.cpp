// The HEVC module's C API (vpcc/api_hevc.h) over De265Stream: libde265's decoded planes are
// described as they are (no conversion: the core module converts bit depths on vpcc_put_picture,
// exactly as for WebCodecs' pictures), and exceptions end here as a status and a message.
#include "vpcc/api_hevc.h"

#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "hevc/de265_stream.h"
#include "vpcc/api.h"
#include "vpcc/bit_reader.h"

struct vpcc_hevc {
  std::unique_ptr<vpcc::De265Stream> stream;
  std::vector<uint8_t> input;
  struct vpcc_hevc_picture picture{};
  bool hasPicture = false;
  int status = VPCC_OK;
  std::string error;
};

namespace {

template <typename Body>
int guarded(vpcc_hevc* h, Body&& body) {
  if (!h) return VPCC_ERR_ARGUMENT;
  try {
    body();
    h->status = VPCC_OK;
    h->error.clear();
  } catch (const vpcc::ParseError& e) {
    h->status = VPCC_ERR_BITSTREAM;
    h->error = e.what();
  } catch (const std::invalid_argument& e) {
    h->status = VPCC_ERR_ARGUMENT;
    h->error = e.what();
  } catch (const std::bad_alloc&) {
    h->status = VPCC_ERR_MEMORY;
    h->error = "out of memory";
  } catch (const std::exception& e) {
    h->status = VPCC_ERR_INTERNAL;
    h->error = e.what();
  }
  return h->status;
}

uint32_t address(const void* p) { return uint32_t(reinterpret_cast<uintptr_t>(p)); }

/// Describes a libde265 picture in the layout vpcc_put_picture takes; refuses what it cannot.
struct vpcc_hevc_picture describe(const de265_image* image) {
  const de265_chroma chroma = de265_get_chroma_format(image);
  if (chroma != de265_chroma_420 && chroma != de265_chroma_444)
    throw vpcc::ParseError("HEVC video sub-bitstream has a chroma format other than 4:2:0 or 4:4:4");
  struct vpcc_hevc_picture p{};
  p.width = uint32_t(de265_get_image_width(image, 0));
  p.height = uint32_t(de265_get_image_height(image, 0));
  p.chroma444 = chroma == de265_chroma_444 ? 1 : 0;
  const int depth = de265_get_bits_per_pixel(image, 0);
  if (depth < 1 || depth > 16) throw vpcc::ParseError("HEVC picture of an unusable bit depth");
  p.bit_depth = uint32_t(depth);
  p.bytes_per_sample = depth > 8 ? 2 : 1;
  uint32_t* fields[3][2] = {{&p.y, &p.y_stride}, {&p.u, &p.u_stride}, {&p.v, &p.v_stride}};
  for (int c = 0; c < 3; ++c) {
    if (de265_get_bits_per_pixel(image, c) != depth)
      throw vpcc::ParseError("HEVC picture whose luma and chroma bit depths differ");
    int stride = 0;  // bytes
    const uint8_t* data = de265_get_image_plane(image, c, &stride);
    if (!data || stride <= 0) throw vpcc::ParseError("HEVC picture without a usable plane");
    *fields[c][0] = address(data);
    *fields[c][1] = uint32_t(stride) / p.bytes_per_sample;
  }
  return p;
}

}  // namespace

extern "C" {

vpcc_hevc* vpcc_hevc_create(void) { return new (std::nothrow) vpcc_hevc(); }

void vpcc_hevc_destroy(vpcc_hevc* h) { delete h; }

int vpcc_hevc_last_status(const vpcc_hevc* h) { return h ? h->status : VPCC_ERR_ARGUMENT; }

const char* vpcc_hevc_last_error(const vpcc_hevc* h) { return h ? h->error.c_str() : "no HEVC decoder"; }

uint8_t* vpcc_hevc_input(vpcc_hevc* h, size_t size) {
  uint8_t* out = nullptr;
  guarded(h, [&] {
    h->input.resize(size);
    out = h->input.data();
  });
  return out;
}

int vpcc_hevc_start(vpcc_hevc* h, size_t size) {
  if (!h) return -1;
  const int status = guarded(h, [&] {
    if (h->stream) throw std::invalid_argument("this HEVC decoder has started already");
    if (size > h->input.size()) throw std::invalid_argument("start size exceeds the input buffer");
    h->input.resize(size);
    h->stream = std::make_unique<vpcc::De265Stream>();
    h->stream->push(h->input);
    std::vector<uint8_t>().swap(h->input);  // libde265 keeps its own copy of every NAL unit
  });
  return status == VPCC_OK ? 0 : -1;
}

int vpcc_hevc_next(vpcc_hevc* h) {
  if (!h) return -1;
  h->hasPicture = false;
  const int status = guarded(h, [&] {
    if (!h->stream) throw std::invalid_argument("vpcc_hevc_start was not called");
    if (const de265_image* image = h->stream->next()) {
      h->picture = describe(image);
      h->hasPicture = true;
    }
  });
  if (status != VPCC_OK) return -1;
  return h->hasPicture ? 1 : 0;
}

const struct vpcc_hevc_picture* vpcc_hevc_current_picture(const vpcc_hevc* h) { return h && h->hasPicture ? &h->picture : nullptr; }

}  // extern "C"
