#!/usr/bin/env python3
"""A minimal HTTP CONNECT proxy for tests: every tunnel goes to 127.0.0.1:TARGET_PORT, whatever host
the client names, so a download of http://unresolvable.invalid/... succeeds only through the proxy.
Prints the port it listens on, then one line per CONNECT request; stops on SIGTERM or after --lifetime s."""
import argparse
import asyncio
import signal
import sys


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer, target_port):
    try:
        request = await client_reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        client_writer.close()
        return
    line = request.split(b"\r\n", 1)[0].decode("latin-1")
    print(line, flush=True)
    if not line.startswith("CONNECT "):
        client_writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        await client_writer.drain()
        client_writer.close()
        return
    upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", target_port)
    client_writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await client_writer.drain()
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target-port", type=int, required=True)
    parser.add_argument("--lifetime", type=float, default=120)
    args = parser.parse_args()
    server = await asyncio.start_server(lambda r, w: handle(r, w, args.target_port), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), args.lifetime)
    except asyncio.TimeoutError:
        pass
    server.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
