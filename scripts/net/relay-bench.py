#!/usr/bin/env python3
"""Measures the holoquic-impair relay on loopback: throughput ceiling or loss.

Starts the relay between a UDP sender and a UDP sink (both in this script),
sends datagrams for a while and prints one JSON line with what the sink got,
the relay's own counters and the relay's CPU time.

  relay-bench.py BINARY throughput --size 1200 --seconds 5
  relay-bench.py BINARY loss --ge 0.1304,10,70,0.1 --packets 100000 --pps 20000
"""
import argparse, json, os, signal, socket, subprocess, sys, threading, time


def sink(sock, counts, stop):
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            n = len(sock.recv(65536))
        except socket.timeout:
            continue
        counts[0] += 1
        counts[1] += n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("mode", choices=["throughput", "loss"])
    ap.add_argument("--size", type=int, default=1200)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--packets", type=int, default=100000)
    ap.add_argument("--pps", type=int, default=20000)
    ap.add_argument("--ge")
    ap.add_argument("--port", type=int, default=47000)
    args = ap.parse_args()

    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    receiver.bind(("127.0.0.1", 0))
    relay_addr = ("127.0.0.1", args.port)
    command = [args.binary, "relay", "--listen", f"{relay_addr[0]}:{relay_addr[1]}",
               "--upstream", "127.0.0.1:%d" % receiver.getsockname()[1]]
    if args.ge:
        command += ["--ge", args.ge]
    relay = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(0.5)
    counts, stop = [0, 0], threading.Event()
    thread = threading.Thread(target=sink, args=(receiver, counts, stop))
    thread.start()
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    payload = b"x" * args.size
    sent, started = 0, time.monotonic()
    if args.mode == "throughput":
        while time.monotonic() - started < args.seconds:
            for _ in range(64):
                sender.sendto(payload, relay_addr)
            sent += 64
    else:
        interval = 1.0 / args.pps
        while sent < args.packets:
            sender.sendto(payload, relay_addr)
            sent += 1
            target = started + sent * interval
            while time.monotonic() < target:
                pass
    elapsed = time.monotonic() - started
    time.sleep(1.0)
    stop.set()
    thread.join()
    with open(f"/proc/{relay.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    relay_cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    relay.send_signal(signal.SIGTERM)
    stats = json.loads(relay.communicate(timeout=5)[0])
    up = stats["to_upstream"]
    print(json.dumps({
        "mode": args.mode, "ge": args.ge, "sent": sent, "relay_seen": up["seen"],
        "relay_dropped_loss": up["dropped_loss"], "received": counts[0],
        "received_mbit_s": round(counts[1] * 8 / elapsed / 1e6, 1),
        "relay_cpu_percent": round(100 * relay_cpu / (elapsed + 1.5), 1),
        "configured_loss_percent_measured": round(100 * up["dropped_loss"] / max(up["seen"], 1), 3),
        "end_to_end_loss_percent": round(100 * (1 - counts[0] / max(sent, 1)), 3),
    }))


if __name__ == "__main__":
    sys.exit(main())
