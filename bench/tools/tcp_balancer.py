#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# A TCP balancer that picks one backend per connection, at random, and keeps the connection on it:
# what kube-proxy (iptables or IPVS random mode) gives a keep-alive client of a Service. For
# bench/spread.sh, which compares it with admitd's per-call spreading; also used with a single
# backend as a pass-through, so both contenders pay the same user-space hop.
#
#   tcp_balancer.py LISTEN_HOST:PORT BACKEND_HOST:PORT [BACKEND_HOST:PORT ...]
import asyncio
import random
import sys


def split(hp):
    host, port = hp.rsplit(":", 1)
    return host, int(port)


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    listen = split(sys.argv[1])
    backends = [split(b) for b in sys.argv[2:]]

    async def on_client(creader, cwriter):
        host, port = random.choice(backends)
        try:
            breader, bwriter = await asyncio.open_connection(host, port)
        except OSError:
            cwriter.close()
            return
        await asyncio.gather(pipe(creader, bwriter), pipe(breader, cwriter))

    server = await asyncio.start_server(on_client, listen[0], listen[1], backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
