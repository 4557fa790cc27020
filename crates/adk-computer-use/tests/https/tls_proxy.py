"""A TLS terminator for the https test: accepts TLS on LISTEN_HOST:PORT with the given
certificate and forwards the plain bytes to TARGET_HOST:PORT (the server's own port, so
the Host header the client sends still names it). Prints "ready" once it listens."""

import asyncio
import ssl
import sys

cert, key, listen_host, target_host, port = sys.argv[1:6]
port = int(port)


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.open_connection(target_host, port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))


async def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = await asyncio.start_server(handle, listen_host, port, ssl=context)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
