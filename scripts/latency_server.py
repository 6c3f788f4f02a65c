#!/usr/bin/env python3
"""A loopback feed server that answers every request 100 ms late: the 1,000-feed latency benchmark's server.

Usage: latency_server.py [--feeds 1000] [--ports 20] [--delay 0.1] [--items 5] [--not-modified PERCENT] [--root DIR]
                         [--parent PID]

It listens on 127.0.0.1 only, on --ports ports the kernel picks (real feed lists span many hosts, and the fetcher
opens at most 6 connections to one host), and serves --feeds small deterministic RSS 2.0 feeds spread over them:
feed i is http://127.0.0.1:PORT[i % ports]/feeds/i.xml. Every response waits --delay seconds after the request
arrived. HTTP/1.1 with keep-alive. The tests use it too (Tests/TestSupport's FeedServer), through these paths:

    /items/COUNT/NAME       a COUNT-item RSS feed whose guids and titles are made from its path
    /redirect/PORT/PATH     302 to http://127.0.0.1:PORT/PATH (one of this server's ports)
    /NAME                   with --root DIR, the file DIR/NAME (the query string ignored): a slow static server

Every generated feed carries the ETag "f<i>"; with --not-modified P, feeds whose index modulo 100 is below P answer
a matching If-None-Match with 304 Not Modified (the others always send the whole feed): the scale benchmark's 80% 304s.

Once listening it prints one JSON line to stdout: {"ports": [...], "urls": [...]}. GET /stats (any port) returns
{"requests": N, "max_in_flight": M, "max_in_flight_per_port": P, "in_flight": K, "repeated": R, "not_modified": S} --
M is the most requests waiting or being answered at once, across all ports, P the most on one port, R how many generated
feeds were requested more than once, S the 304s -- and /stats?reset=1 resets the counters after
reading them. It exits on SIGTERM or SIGINT, or when the process --parent names is gone, printing the final stats as
one JSON line to stderr.
"""
import argparse
import asyncio
import json
import mimetypes
import os
import signal
import sys
from urllib.parse import unquote, urlsplit


class Stats:
    def __init__(self):
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.per_port = {}
        self.max_per_port = {}
        self.feed_requests = {}
        self.not_modified = 0

    def begin(self, port):
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.per_port[port] = self.per_port.get(port, 0) + 1
        self.max_per_port[port] = max(self.max_per_port.get(port, 0), self.per_port[port])

    def end(self, port):
        self.in_flight -= 1
        self.per_port[port] -= 1

    def snapshot(self):
        return {"requests": self.requests, "max_in_flight": self.max_in_flight,
                "max_in_flight_per_port": max(self.max_per_port.values(), default=0), "in_flight": self.in_flight,
                "repeated": sum(1 for count in self.feed_requests.values() if count > 1), "not_modified": self.not_modified}

    def reset(self):
        self.requests = 0
        self.max_in_flight = self.in_flight
        self.max_per_port = dict(self.per_port)
        self.feed_requests = {}
        self.not_modified = 0


WORDS = ("market update council river design energy transit festival harbour research Zürich 東京 café naïve "
         "policy weather report budget school garden railway museum league season launch review").split()


def feed(index: int, items: int) -> bytes:
    """A small RSS 2.0 feed, the same bytes for the same index on every run (about 3 KB)."""
    state = index * 2654435761 % 2**32 or 1

    def rand(bound):
        nonlocal state
        state = (state * 1103515245 + 12345) % 2**31
        return state % bound

    def words(count):
        return " ".join(WORDS[rand(len(WORDS))] for _ in range(count))

    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>',
             f"<title>Latency feed {index}</title><link>http://feeds.invalid/{index}/</link>",
             f"<description>{words(8)}</description>"]
    for item in range(items):
        day = 1 + (index + item) % 28
        parts.append(
            f"<item><title>{words(6)} #{index}-{item}</title>"
            f"<link>http://feeds.invalid/{index}/{item}</link>"
            f'<guid isPermaLink="false">latency-{index}-{item}</guid>'
            f"<pubDate>{day:02d} Dec 2025 {item % 24:02d}:00:00 +0000</pubDate>"
            f"<description>&lt;p&gt;{words(40)}&lt;/p&gt;</description></item>")
    parts.append("</channel></rss>\n")
    return "".join(parts).encode("utf-8")


def path_feed(path: str, items: int) -> bytes:
    """A feed named by its path: the same path gives the same bytes, another path other guids."""
    body = "".join(f"<item><title>{path} {i}</title><guid>{path}#{i}</guid><link>http://feeds.invalid{path}/{i}</link>"
                   f"<description>{'x' * 200}</description></item>" for i in range(items))
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>{path}</title>{body}</channel></rss>'.encode()


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feeds", type=int, default=1000)
    parser.add_argument("--ports", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument("--not-modified", type=int, default=0)
    parser.add_argument("--root", default=None)
    parser.add_argument("--parent", type=int, default=0)
    args = parser.parse_args()

    bodies = [feed(i, args.items) for i in range(args.feeds)]
    stats = Stats()

    async def respond(writer, status, body, content_type, extra=""):
        head = (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                f"Cache-Control: no-cache\r\n{extra}\r\n")
        writer.write(head.encode("ascii") + body)
        await writer.drain()

    async def answer(writer, path, lines):
        name = path.rsplit("/", 1)[-1]
        number = name[:-4] if name.endswith(".xml") else ""
        parts = path.split("/")
        if path.startswith("/feeds/") and number.isdigit() and int(number) < len(bodies):
            index = int(number)
            stats.feed_requests[index] = stats.feed_requests.get(index, 0) + 1
            etag = f'"f{index}"'
            match = any(line.lower().startswith("if-none-match:") and etag in line for line in lines[1:])
            if match and index % 100 < args.not_modified:
                stats.not_modified += 1
                writer.write(f"HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nContent-Length: 0\r\n\r\n".encode("ascii"))
                await writer.drain()
            else:
                await respond(writer, "200 OK", bodies[index], "application/rss+xml; charset=utf-8", f"ETag: {etag}\r\n")
        elif path.startswith("/items/") and len(parts) > 3 and parts[2].isdigit():
            await respond(writer, "200 OK", path_feed(path, int(parts[2])), "application/rss+xml")
        elif path.startswith("/redirect/") and len(parts) > 3 and parts[2].isdigit():
            target = f"http://127.0.0.1:{parts[2]}/{'/'.join(parts[3:])}"
            await respond(writer, "302 Found", b"", "text/plain", f"Location: {target}\r\n")
        elif args.root and os.path.isfile(file := os.path.join(args.root, unquote(path).lstrip("/"))) \
                and os.path.realpath(file).startswith(os.path.realpath(args.root) + os.sep):
            with open(file, "rb") as handle:
                body = handle.read()
            await respond(writer, "200 OK", body, mimetypes.guess_type(file)[0] or "application/octet-stream")
        else:
            await respond(writer, "404 Not Found", b"not found\n", "text/plain")

    async def handle(reader, writer):
        try:
            while True:
                request = await reader.readuntil(b"\r\n\r\n")
                lines = request.decode("latin-1").split("\r\n")
                parts = lines[0].split(" ")
                if len(parts) < 2:
                    break
                path = parts[1]
                close = any(line.lower().startswith("connection:") and "close" in line.lower() for line in lines[1:])
                if path.startswith("/stats"):
                    body = json.dumps(stats.snapshot()).encode()
                    if "reset=1" in path:
                        stats.reset()
                    await respond(writer, "200 OK", body, "application/json")
                else:
                    port = writer.get_extra_info("sockname")[1]
                    stats.begin(port)
                    try:
                        await asyncio.sleep(args.delay)
                        await answer(writer, urlsplit(path).path, lines)
                    finally:
                        stats.end(port)
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # Shutting down with the connection still open (kept alive): nothing to finish.
            pass
        finally:
            writer.close()

    servers = [await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024) for _ in range(args.ports)]
    ports = [server.sockets[0].getsockname()[1] for server in servers]
    urls = [f"http://127.0.0.1:{ports[i % len(ports)]}/feeds/{i}.xml" for i in range(args.feeds)]
    print(json.dumps({"ports": ports, "urls": urls}), flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async def watch_parent():
        while args.parent and not stop.is_set():
            try:
                os.kill(args.parent, 0)
            except ProcessLookupError:
                stop.set()
            await asyncio.sleep(0.5)

    watcher = asyncio.create_task(watch_parent())
    await stop.wait()
    watcher.cancel()
    for server in servers:
        server.close()
    print(json.dumps(stats.snapshot()), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
