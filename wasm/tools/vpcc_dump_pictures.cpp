// vpcc-dump-pictures: decodes the video sub-bitstreams of a V3C segment natively (libavcodec) and
// writes every picture as a file, in the order and form the wasm module's C API takes them back.
// The wasm build decodes no video itself, so its conformance test in Node feeds it these.
//
//   vpcc-dump-pictures stream.bin OUT_DIR
//
// OUT_DIR/pictures.txt has one line per picture: "stream index width height bitDepth chroma444
// file"; each file holds the Y, U and V planes one after the other at the component's nominal
// bit depth, one byte per sample up to 8 bits, else two (little-endian).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: vpcc-dump-pictures stream.bin OUT_DIR\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "vpcc-dump-pictures: cannot read %s\n", argv[1]);
    return 1;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const std::string dir = argv[2];
  try {
    vpcc::DecodeSession session;
    session.load(bytes.data(), bytes.size());
    auto decoder = vpcc::makeLibavDecoder();
    std::ofstream index(dir + "/pictures.txt");
    if (!index) throw std::runtime_error("cannot write " + dir + "/pictures.txt (does the directory exist?)");
    for (uint32_t s = 0; s < session.streams().size(); ++s) {
      const vpcc::VideoStreamInfo& info = session.streams()[s];
      const auto pictures = decoder->decode(info.bitstream->data, info.codec, info.bitDepth);
      if (pictures.size() != info.pictureCount)
        std::fprintf(stderr, "vpcc-dump-pictures: stream %u has %zu pictures, the atlas needs %u\n", s,
                     pictures.size(), info.pictureCount);
      for (uint32_t i = 0; i < pictures.size(); ++i) {
        const vpcc::Picture& pic = pictures[i];
        const std::string name = "s" + std::to_string(s) + "_p" + std::to_string(i) + ".yuv";
        std::ofstream out(dir + "/" + name, std::ios::binary);
        for (const vpcc::Plane& plane : pic.planes)
          for (uint16_t sample : plane.samples) {
            out.put(char(sample & 0xff));
            if (pic.bitDepth > 8) out.put(char(sample >> 8));
          }
        if (!out) throw std::runtime_error("cannot write " + dir + "/" + name);
        index << s << ' ' << i << ' ' << pic.width << ' ' << pic.height << ' ' << int(pic.bitDepth) << ' '
              << (pic.chroma444 ? 1 : 0) << ' ' << name << '\n';
      }
    }
  } catch (const vpcc::ParseError& e) {
    std::fprintf(stderr, "vpcc-dump-pictures: invalid bitstream: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vpcc-dump-pictures: %s\n", e.what());
    return 1;
  }
  return 0;
}
