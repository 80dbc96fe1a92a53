#!/usr/bin/env python3
"""Tiny traffic generator/receiver for the namespace self-test.

  traffic.py udp-recv PORT SECONDS          -> JSON {packets, bytes, per_second_mbit}
  traffic.py udp-send HOST PORT MBIT SECONDS [SIZE]
  traffic.py udp-send-gso HOST PORT COUNT SEGMENTS SIZE -> COUNT super-packets at once (UDP_SEGMENT)
  traffic.py tcp-recv PORT                  -> JSON {bytes}
  traffic.py tcp-send HOST PORT BYTES
The receiver prints its result as one JSON line on stdout.
"""
import json, socket, sys, time


def udp_recv(port, seconds):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind(("0.0.0.0", port))
    sock.settimeout(0.1)
    bins, packets, total, first = {}, 0, 0, None
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            n = len(sock.recv(65536))
        except socket.timeout:
            continue
        now = time.monotonic()
        first = first if first is not None else now
        second = int(now - first)
        bins[second] = bins.get(second, 0) + n
        packets, total = packets + 1, total + n
    series = [round(bins.get(s, 0) * 8 / 1e6, 2) for s in range(max(bins, default=-1) + 1)]
    print(json.dumps({"packets": packets, "bytes": total, "per_second_mbit": series}))


def udp_send(host, port, mbit, seconds, size=1200):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"x" * size
    interval = size * 8 / (mbit * 1e6)
    start, sent = time.monotonic(), 0
    while time.monotonic() - start < seconds:
        try:
            sock.sendto(payload, (host, port))
        except OSError:
            pass  # a full qdisc reports ENOBUFS: that packet is lost, as on a real link
        sent += 1
        target = start + sent * interval
        while time.monotonic() < target:
            pass
    print(json.dumps({"sent": sent}))


# UDP_SEGMENT from linux/udp.h: the kernel cuts each send into SEGMENTS datagrams of SIZE bytes
# (generic segmentation offload, as the origin sends), so a qdisc sees one large packet.
UDP_SEGMENT = 103


def udp_send_gso(host, port, count, segments, size):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.IPPROTO_UDP, UDP_SEGMENT, size)
        gso = True
    except OSError:
        gso = False  # a kernel without UDP GSO: the same datagrams one by one
    for _ in range(count):
        try:
            if gso:
                sock.sendto(b"g" * (segments * size), (host, port))
            else:
                for _ in range(segments):
                    sock.sendto(b"g" * size, (host, port))
        except OSError:
            pass
    print(json.dumps({"sent": count * segments, "gso": gso}))


def tcp_recv(port):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(1)
    conn, _ = server.accept()
    total = 0
    while chunk := conn.recv(65536):
        total += len(chunk)
    print(json.dumps({"bytes": total}))


def tcp_send(host, port, count):
    conn = socket.create_connection((host, port), timeout=10)
    block = b"y" * 65536
    left = count
    while left > 0:
        conn.sendall(block[:min(left, len(block))])
        left -= min(left, len(block))
    conn.close()


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "udp-recv":
        udp_recv(int(rest[0]), float(rest[1]))
    elif mode == "udp-send":
        udp_send(rest[0], int(rest[1]), float(rest[2]), float(rest[3]), *(int(x) for x in rest[4:]))
    elif mode == "udp-send-gso":
        udp_send_gso(rest[0], int(rest[1]), *(int(x) for x in rest[2:5]))
    elif mode == "tcp-recv":
        tcp_recv(int(rest[0]))
    elif mode == "tcp-send":
        tcp_send(rest[0], int(rest[1]), int(rest[2]))
    else:
        sys.exit(__doc__)
