#!/usr/bin/env python3
"""Reads what the video sub-bitstreams of a V3C sample stream say about their timing: for each
AVC video (occupancy, geometry, attribute) the pictures per second its sequence parameter set
declares in the VUI timing information (time_scale / (2 · num_units_in_tick), as H.264 E.2.1
defines it for frame pictures). Written from the specifications (ISO/IEC 23090-5 sample streams,
H.264 7.3.2.1.1 and E.1.1) so the packer's tests read the stream, not the encoder's settings.

    video_timing.py SEGMENT.v3c   → prints one line per video: type and pictures per second"""
import sys

VIDEO_TYPES = {2: "occupancy", 3: "geometry", 4: "attribute"}


class Bits:
    """Big-endian bit reader over an RBSP (emulation prevention already removed)."""

    def __init__(self, data):
        self.data, self.pos = data, 0

    def u(self, n):
        value = 0
        for _ in range(n):
            if self.pos >= len(self.data) * 8:
                raise ValueError("SPS ends early")
            value = (value << 1) | ((self.data[self.pos >> 3] >> (7 - (self.pos & 7))) & 1)
            self.pos += 1
        return value

    def ue(self):
        zeros = 0
        while self.u(1) == 0:
            zeros += 1
            if zeros > 31:
                raise ValueError("bad Exp-Golomb code")
        return (1 << zeros) - 1 + self.u(zeros)

    def se(self):
        k = self.ue()
        return (k + 1) // 2 if k & 1 else -(k // 2)


def rbsp(nal):
    """The NAL unit's payload without its emulation prevention bytes (00 00 03 → 00 00)."""
    out, zeros = bytearray(), 0
    for b in nal:
        if zeros >= 2 and b == 3:
            zeros = 0
            continue
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return bytes(out)


def skip_scaling_list(bits, size):
    last = nxt = 8
    for _ in range(size):
        if nxt:
            nxt = (last + bits.se() + 256) % 256
        last = nxt or last


def avc_sps_picture_rate(sps):
    """Pictures per second from an AVC SPS (header byte included), or None without timing info."""
    b = Bits(rbsp(sps[1:]))
    profile = b.u(8)
    b.u(16)  # constraint flags, reserved bits, level_idc
    b.ue()  # seq_parameter_set_id
    if profile in (100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135):
        chroma_format = b.ue()
        if chroma_format == 3:
            b.u(1)
        b.ue(), b.ue(), b.u(1)  # bit depths, qpprime_y_zero_transform_bypass
        if b.u(1):  # seq_scaling_matrix_present_flag
            for i in range(8 if chroma_format != 3 else 12):
                if b.u(1):
                    skip_scaling_list(b, 16 if i < 6 else 64)
    b.ue()  # log2_max_frame_num_minus4
    poc_type = b.ue()
    if poc_type == 0:
        b.ue()
    elif poc_type == 1:
        b.u(1), b.se(), b.se()
        for _ in range(b.ue()):
            b.se()
    b.ue(), b.u(1), b.ue(), b.ue()  # max_num_ref_frames, gaps, width and height in macroblocks
    if not b.u(1):  # frame_mbs_only_flag
        b.u(1)
    b.u(1)  # direct_8x8_inference_flag
    if b.u(1):  # frame_cropping_flag
        b.ue(), b.ue(), b.ue(), b.ue()
    if not b.u(1):  # vui_parameters_present_flag
        return None
    if b.u(1):  # aspect_ratio_info_present_flag
        if b.u(8) == 255:
            b.u(32)
    if b.u(1):  # overscan_info_present_flag
        b.u(1)
    if b.u(1):  # video_signal_type_present_flag
        b.u(4)
        if b.u(1):
            b.u(24)
    if b.u(1):  # chroma_loc_info_present_flag
        b.ue(), b.ue()
    if not b.u(1):  # timing_info_present_flag
        return None
    ticks, scale = b.u(32), b.u(32)
    return scale / (2 * ticks) if ticks else None


def videos(stream):
    """(type name, [NAL units]) of each video unit in a V3C sample stream."""
    precision = (stream[0] >> 5) + 1
    pos, found = 1, []
    while pos + precision <= len(stream):
        size = int.from_bytes(stream[pos:pos + precision], "big")
        unit = stream[pos + precision:pos + precision + size]
        pos += precision + size
        kind = unit[0] >> 3
        if kind in VIDEO_TYPES:
            nals, at, data = [], 0, unit[4:]
            while at + 4 <= len(data):
                n = int.from_bytes(data[at:at + 4], "big")
                nals.append(data[at + 4:at + 4 + n])
                at += 4 + n
            found.append((VIDEO_TYPES[kind], nals))
    return found


def picture_rates(path):
    """{video type: pictures per second} of an AVC-coded V3C segment."""
    with open(path, "rb") as f:
        stream = f.read()
    rates = {}
    for name, nals in videos(stream):
        sps = [n for n in nals if n and n[0] & 0x1F == 7]
        if not sps:
            raise ValueError(f"{path}: the {name} video has no AVC sequence parameter set")
        rates[name] = avc_sps_picture_rate(sps[0])
    return rates


if __name__ == "__main__":
    for kind, rate in picture_rates(sys.argv[1]).items():
        print(f"{kind}: {rate} pictures/s")
