#!/usr/bin/env python3
"""The everyday lab's QUIC pair (aioquic): `server ADDR PORT CERT KEY` echoes each stream
back; `client ADDR PORT` completes a handshake, sends one stream and reads its echo, pings,
and closes the connection. ALPN "lab-echo"."""
import asyncio
import ssl
import sys

from aioquic.asyncio import connect, serve
from aioquic.quic.configuration import QuicConfiguration

ALPN = ["lab-echo"]


async def echo(reader, writer):
    writer.write(await reader.read())
    writer.write_eof()


async def server(addr, port, cert, key):
    config = QuicConfiguration(is_client=False, alpn_protocols=ALPN)
    config.load_cert_chain(cert, key)
    await serve(addr, port, configuration=config,
                stream_handler=lambda r, w: asyncio.ensure_future(echo(r, w)))
    await asyncio.Future()


async def client(addr, port):
    config = QuicConfiguration(is_client=True, alpn_protocols=ALPN,
                               server_name="quic.lab.example", verify_mode=ssl.CERT_NONE)
    async with connect(addr, port, configuration=config) as conn:
        reader, writer = await conn.create_stream()
        writer.write(b"hello over QUIC\n")
        writer.write_eof()
        assert await reader.read() == b"hello over QUIC\n"
        await conn.ping()
        conn.close()


if __name__ == "__main__":
    if sys.argv[1] == "server":
        asyncio.run(server(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]))
    else:
        asyncio.run(asyncio.wait_for(client(sys.argv[2], int(sys.argv[3])), 10))
