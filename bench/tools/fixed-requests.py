#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# Sends exactly N POSTs of one AdmissionReview over one TLS keep-alive connection and checks each
# answer is a 200: the client for counting a server's instructions per request under callgrind
# (bench/callgrind.sh), where what matters is a fixed number of requests, not the client's speed.
# The first answer is written to stdout (so a caller can check it); exit 1 on any other answer.
#
#   fixed-requests.py HOST PORT PATH REVIEW N [CA_FILE]   (no CA_FILE: plain HTTP)
import socket
import ssl
import sys


def read_answer(f):
    status = f.readline()
    length = None
    while True:
        line = f.readline()
        if line in (b"\r\n", b""):
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None:
        raise SystemExit("fixed-requests: answer without Content-Length: %r" % status)
    return status, f.read(length)


def main():
    host, port, path, review, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
    with open(review, "rb") as r:
        body = r.read()
    head = ("POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (path, host, port, len(body))).encode()
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if len(sys.argv) > 6:
        ctx = ssl.create_default_context(cafile=sys.argv[6])
        sock = ctx.wrap_socket(sock, server_hostname=host)
    f = sock.makefile("rb")
    for i in range(n):
        sock.sendall(head + body)
        status, answer = read_answer(f)
        if not status.startswith(b"HTTP/1.1 200"):
            raise SystemExit("fixed-requests: request %d: %r %r" % (i, status, answer[:200]))
        if i == 0:
            sys.stdout.write(answer.decode() + "\n")
    sock.close()


main()
