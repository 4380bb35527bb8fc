#!/usr/bin/env python3
"""bench/rtt_probe.py PORT: send PING, wait for PONG, again, until SIGTERM;
then print the longest round trip in milliseconds (bench/persist.sh)."""
import signal, socket, sys, time

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
worst = 0.0
running = True

def stop(*_):
    global running
    running = False

signal.signal(signal.SIGTERM, stop)
while running:
    t = time.perf_counter()
    s.sendall(b"PING\r\n")
    got = b""
    while not got.endswith(b"\r\n"):
        chunk = s.recv(64)
        if not chunk:
            running = False
            break
        got += chunk
    worst = max(worst, time.perf_counter() - t)
    time.sleep(0.001)
print(f"{worst * 1000:.1f}")
