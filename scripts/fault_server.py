#!/usr/bin/env python3
"""A misbehaving HTTP/1.1 server for feedingest's Fetch tests (Python standard library only).

Listens on 127.0.0.1 only, on a free port, prints "PORT <n>" on stdout, and serves until the process named by
`--parent PID` ends (without it, until its standard input closes), so it ends with the tests that started it. Every scenario is a path; a `token` query parameter
keeps the counters and release signals of concurrent tests apart.

    /feed?items=N[&gzip=1][&chunked=1]      a well-formed RSS feed, keep-alive
    /empty-headers?items=N                  a feed whose Content-Type, Cache-Control, Retry-After and Link are empty
    /headers                                ETag, Last-Modified, Cache-Control, Expires, Link; 304 on If-None-Match
    /stream?token=T[&gzip=1]                the first item, then waits for /release?token=T, then the rest
    /reset?token=T                          two items, waits for /release?token=T, then a TCP reset
    /stall                                  one item, then nothing at all, connection left open
    /drip?items=N&size=B&tick_ms=M          the whole feed, B bytes every M milliseconds
    /short-length, /long-length             Content-Length smaller / larger than the body
    /chunked?items=N                        chunked encoding with odd chunk sizes
    /status?code=C[&retry=S][&retry_date=1] an error status, optionally with Retry-After seconds or an HTTP date
    /hop?chain=301,302,308&i=0              a redirect chain, then the feed
    /loop/a, /loop/b                        a redirect loop
    /to-file                                a redirect to file:///etc/passwd
    /bomb                                   a gzip bomb (about 1,000:1)
    /corrupt-gzip[?where=crc], /gzip-plain  broken gzip bodies (damaged mid-stream or in the CRC)
    /gzip-unlabelled?items=N[&corrupt=1]    a gzip body without Content-Encoding (application/octet-stream)
    /deflate?raw=0|1, /gzip-members         deflate (zlib-wrapped or raw), concatenated gzip members
    /charset                                a windows-1251 body whose XML declaration claims UTF-8
    /mislabelled?charset=L&codec=C          a feed with accented titles written in Python's codec C, served with
                                            Content-Type charset L (no XML declaration)
    /hold?token=T                           waits for /release?token=T; /stats?token=T reports concurrency
    /big?bytes=N                            N bytes of feed, chunked, no Content-Length
    /stats?token=T                          JSON: requests, connections, held, peak_held
    /release?token=T                        releases the waiters of T
    /watch?token=T                          a feed of the token's items (dated a minute apart), ETag "vN"; 304 on
                                            If-None-Match; each request's time and status logged
    /watch-set?token=T&items=N              sets the token's feed to N items (control, not logged)
    /watch-log?token=T                      JSON: [[time, status], ...] of the token's /watch requests (control)
    /media/NAME?token=T                     an enclosure with ETag, Last-Modified and byte ranges (Range, If-Range, 416);
                                            /media-control?token=T&... sets its body and faults, /media-log?token=T lists
                                            the requests it got (see media_route)
    /media-redirect?token=T&port=P&to=PATH  a 302 to PATH?token=T on 127.0.0.1:P (another "host")
"""
import asyncio
import email.utils
import json
import os
import socket
import struct
import sys
import threading
import time
import zlib
from urllib.parse import parse_qs, urlsplit

RELEASE_TIMEOUT = 60  # seconds a waiting scenario waits for its release before giving up (closing)


def feed(items, title="Fault server feed"):
    """A well-formed RSS 2.0 feed as (prologue, [item], epilogue) bytes."""
    prologue = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0">\n<channel>\n'
        f"<title>{title}</title>\n<link>http://127.0.0.1/</link>\n<description>test</description>\n"
    ).encode()
    parts = []
    for i in range(items):
        parts.append(
            (
                f"<item><title>Item {i}</title><link>http://127.0.0.1/items/{i}</link>"
                f"<guid>item-{i}</guid><description>Body of item {i}: "
                + "lorem ipsum dolor sit amet " * 8
                + "</description></item>\n"
            ).encode()
        )
    epilogue = b"</channel>\n</rss>\n"
    return prologue, parts, epilogue


def whole_feed(items):
    prologue, parts, epilogue = feed(items)
    return prologue + b"".join(parts) + epilogue


def gzip_bytes(data):
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


_bomb = None


def bomb():
    """About 256 MiB of XML (a text node of spaces) in about 256 KB of gzip."""
    global _bomb
    if _bomb is None:
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
        out = [compressor.compress(b'<?xml version="1.0"?>\n<rss version="2.0"><channel><title>bomb</title><description>')]
        block = b" " * (1 << 20)
        for _ in range(256):
            out.append(compressor.compress(block))
        out.append(compressor.compress(b"</description></channel></rss>\n"))
        out.append(compressor.flush())
        _bomb = b"".join(out)
    return _bomb


class Stats:
    def __init__(self):
        self.requests = 0
        self.connections = set()
        self.held = 0
        self.peak_held = 0
        self.release = asyncio.Event()


stats = {}
next_connection = 0


def stats_for(token):
    if token not in stats:
        stats[token] = Stats()
    return stats[token]


async def wait_release(token):
    try:
        await asyncio.wait_for(stats_for(token).release.wait(), RELEASE_TIMEOUT)
        return True
    except asyncio.TimeoutError:
        return False


def head(status, headers, reason=None):
    reasons = {200: "OK", 301: "Moved Permanently", 302: "Found", 304: "Not Modified", 307: "Temporary Redirect",
               308: "Permanent Redirect", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 410: "Gone",
               429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}
    lines = [f"HTTP/1.1 {status} {reason or reasons.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk(data):
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


XML = ("Content-Type", "application/rss+xml; charset=utf-8")


async def handle(reader, writer):
    global next_connection
    next_connection += 1
    connection = next_connection
    try:
        while True:
            try:
                raw = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                return
            lines = raw.decode("latin-1").split("\r\n")
            method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            url = urlsplit(target)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            token = query.get("token", "")
            record = stats_for(token)
            if url.path not in ("/stats", "/release"):  # control requests are not counted
                record.requests += 1
                record.connections.add(connection)
            keep = await route(url.path, query, headers, record, writer)
            await writer.drain()
            if not keep or headers.get("connection", "").lower() == "close":
                return
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


watch_feeds = {}  # token -> {"items": N, "log": [[time, status], ...]}


def watch_route(path, query, headers, writer):
    """The /watch family: a feed that changes on request, for feedingest watch's tests."""
    token = query.get("token", "")
    state = watch_feeds.setdefault(token, {"items": 3, "log": [], "base": time.time() - 3600})
    if path == "/watch-set":
        state["items"] = int(query.get("items", "3"))
        writer.write(head(200, [("Content-Type", "text/plain"), ("Content-Length", 2), ("Connection", "close")]) + b"ok")
        return False
    if path == "/watch-log":
        body = json.dumps(state["log"]).encode()
        writer.write(head(200, [("Content-Type", "application/json"), ("Content-Length", len(body)),
                                ("Connection", "close")]) + body)
        return False
    tag = f'"v{state["items"]}"'
    if headers.get("if-none-match") == tag:
        state["log"].append([time.time(), 304])
        writer.write(head(304, [("ETag", tag), ("Content-Length", 0)]))
        return True
    state["log"].append([time.time(), 200])
    items = []
    for i in range(state["items"]):
        date = email.utils.formatdate(state["base"] + 60 * i, usegmt=True)  # fixed: an item never changes
        items.append(f"<item><title>Watch {token} {i}</title><link>http://127.0.0.1/watch/{token}/{i}</link>"
                     f"<guid>watch-{token}-{i}</guid><pubDate>{date}</pubDate></item>\n")
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Watch</title>'
            "<link>http://127.0.0.1/</link><description>test</description>\n" + "".join(items)
            + "</channel></rss>\n").encode()
    writer.write(head(200, [XML, ("Content-Length", len(body)), ("ETag", tag)]) + body)
    return True


def auth_route(path, query, headers, writer):
    """/auth-feed?expect=B64[&port=P][&token=T]: a feed behind HTTP basic authentication, for the redaction tests.

    Answers 401 unless the request's `Authorization: Basic` credentials are `expect` (base64 of `user:password`, so
    the password itself is in no URL); then an RSS feed of 2 items whose links and enclosures carry those credentials
    in their URLs (`http://user:password@127.0.0.1:P/media/NAME?token=T`, served by /media).
    """
    expected = query.get("expect", "")
    given = headers.get("authorization", "")
    if not expected or given != "Basic " + expected:
        body = b"authentication required"
        writer.write(head(401, [("WWW-Authenticate", 'Basic realm="feedingest"'), ("Content-Length", len(body))],
                          "Unauthorized") + body)
        return True
    import base64
    credentials = base64.b64decode(expected).decode("utf-8")
    port, token = query.get("port", "9"), query.get("token", "")
    items = []
    for i in range(2):
        url = f"http://{credentials}@127.0.0.1:{port}/media/episode{i}.mp3?token={token}"
        items.append(f"<item><title>Private {i}</title><link>http://{credentials}@127.0.0.1:{port}/post/{i}</link>"
                     f"<guid>auth-{token}-{i}</guid><enclosure url=\"{url}\" type=\"audio/mpeg\" length=\"0\"/></item>\n")
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>Private</title>'
            "<link>http://127.0.0.1/</link><description>test</description>\n" + "".join(items)
            + "</channel></rss>\n").encode()
    writer.write(head(200, [XML, ("Content-Length", len(body))]) + body)
    return True


async def route(path, query, headers, record, writer):
    """Serves one request; returns whether the connection may be kept alive."""
    if path in ("/watch", "/watch-set", "/watch-log"):
        return watch_route(path, query, headers, writer)
    if path == "/auth-feed":
        return auth_route(path, query, headers, writer)
    items = int(query.get("items", "20"))
    token = query.get("token", "")

    if path.startswith("/media"):
        return await media_route(path, query, headers, writer)

    if path == "/feed":
        body = whole_feed(items)
        extra = []
        if query.get("gzip") == "1" and "gzip" in headers.get("accept-encoding", ""):
            body = gzip_bytes(body)
            extra.append(("Content-Encoding", "gzip"))
        if query.get("chunked") == "1":
            writer.write(head(200, [XML, ("Transfer-Encoding", "chunked")] + extra))
            writer.write(chunk(body) + b"0\r\n\r\n")
        else:
            writer.write(head(200, [XML, ("Content-Length", len(body))] + extra) + body)
        return True

    if path == "/headers":
        tag = '"v1-abc"'
        if headers.get("if-none-match") == tag:
            writer.write(head(304, [("ETag", tag), ("Content-Length", 0)]))
            return True
        body = whole_feed(3)
        expires = email.utils.formatdate(time.time() + 3600, usegmt=True)
        writer.write(head(200, [XML, ("Content-Length", len(body)), ("ETag", tag),
                                ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
                                ("Cache-Control", "public, max-age=300"), ("Expires", expires),
                                ("Link", '<https://hub.example.com/>; rel="hub", </feeds/self.xml>; rel="self"'),
                                ("Link", '<https://other.example.com/>; rel="alternate payment"'),
                                ("X-Request-If-Modified-Since", headers.get("if-modified-since", "")),
                                ("X-Request-Accept-Encoding", headers.get("accept-encoding", "")),
                                ("X-Request-User-Agent", headers.get("user-agent", ""))]) + body)
        return True

    if path == "/stream":
        prologue, parts, epilogue = feed(items)
        first = prologue + parts[0]
        rest = b"".join(parts[1:]) + epilogue
        extra = []
        compressor = None
        if query.get("gzip") == "1":
            compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
            extra.append(("Content-Encoding", "gzip"))
        writer.write(head(200, [XML, ("Transfer-Encoding", "chunked")] + extra))
        if compressor:
            # A sync flush makes everything so far decodable before the rest exists.
            first = compressor.compress(first) + compressor.flush(zlib.Z_SYNC_FLUSH)
        writer.write(chunk(first))
        await writer.drain()
        if not await wait_release(token):
            return False
        if compressor:
            rest = compressor.compress(rest) + compressor.flush()
        writer.write(chunk(rest) + b"0\r\n\r\n")
        return True

    if path == "/reset":
        prologue, parts, epilogue = feed(items)
        body = prologue + b"".join(parts) + epilogue
        writer.write(head(200, [XML, ("Content-Length", len(body))]) + prologue + parts[0] + parts[1])
        await writer.drain()
        await wait_release(token)
        sock = writer.get_extra_info("socket")
        # SO_LINGER with a zero timeout: close() sends a RST instead of a FIN.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return False

    if path == "/stall":
        prologue, parts, _ = feed(2)
        writer.write(head(200, [XML, ("Content-Length", 100000)]) + prologue + parts[0])
        await writer.drain()
        try:
            await asyncio.sleep(120)
        except asyncio.CancelledError:
            pass
        return False

    if path == "/drip":
        body = whole_feed(items)
        size = int(query.get("size", "16"))
        tick = int(query.get("tick_ms", "5")) / 1000
        writer.write(head(200, [XML, ("Content-Length", len(body))]))
        for offset in range(0, len(body), size):
            writer.write(body[offset:offset + size])
            await writer.drain()
            await asyncio.sleep(tick)
        return True

    if path == "/short-length":
        body = whole_feed(items)
        cut = len(body) // 2
        writer.write(head(200, [XML, ("Content-Length", cut), ("Connection", "close")]) + body)
        return False

    if path == "/long-length":
        body = whole_feed(items)
        writer.write(head(200, [XML, ("Content-Length", len(body) + 5000)]) + body)
        await writer.drain()
        return False

    if path == "/chunked":
        body = whole_feed(items)
        writer.write(head(200, [XML, ("Transfer-Encoding", "chunked")]))
        sizes = [1, 7, 100, 3, 1000, 13, 4096]
        offset, i = 0, 0
        while offset < len(body):
            size = sizes[i % len(sizes)]
            writer.write(chunk(body[offset:offset + size]))
            offset += size
            i += 1
        writer.write(b"0\r\n\r\n")
        return True

    if path == "/status":
        code = int(query.get("code", "500"))
        extra = []
        if "retry" in query:
            extra.append(("Retry-After", query["retry"]))
        if query.get("retry_date") == "1":
            extra.append(("Retry-After", email.utils.formatdate(time.time() + 3600, usegmt=True)))
        body = f"<html><body>status {code}</body></html>".encode()
        writer.write(head(code, [("Content-Type", "text/html"), ("Content-Length", len(body))] + extra) + body)
        return True

    if path == "/hop":
        chain = [int(c) for c in query.get("chain", "").split(",") if c]
        i = int(query.get("i", "0"))
        if i < len(chain):
            location = f"/hop?chain={query.get('chain', '')}&i={i + 1}&token={token}"
            writer.write(head(chain[i], [("Location", location), ("Content-Length", 0)]))
            return True
        body = whole_feed(3)
        writer.write(head(200, [XML, ("Content-Length", len(body))]) + body)
        return True

    if path in ("/loop/a", "/loop/b"):
        other = "/loop/b" if path == "/loop/a" else "/loop/a"
        writer.write(head(302, [("Location", other), ("Content-Length", 0)]))
        return True

    if path == "/to-file":
        writer.write(head(302, [("Location", "file:///etc/passwd"), ("Content-Length", 0)]))
        return True

    if path == "/bomb":
        body = bomb()
        writer.write(head(200, [XML, ("Content-Encoding", "gzip"), ("Content-Length", len(body))]))
        writer.write(body)
        return True

    if path == "/corrupt-gzip":
        body = bytearray(gzip_bytes(whole_feed(200)))
        if query.get("where") == "crc":
            body[-8] ^= 0xFF  # the CRC-32 of the trailer: every byte decodes, the check fails at the end
        else:
            middle = len(body) // 2
            for i in range(middle, middle + 64):
                body[i] ^= 0x5A
        writer.write(head(200, [XML, ("Content-Encoding", "gzip"), ("Content-Length", len(body))]) + bytes(body))
        return True

    if path == "/gzip-unlabelled":
        body = bytearray(gzip_bytes(whole_feed(items)))
        if query.get("corrupt") == "1":
            middle = len(body) // 2
            for i in range(middle, middle + 64):
                body[i] ^= 0x5A
        writer.write(head(200, [("Content-Type", "application/octet-stream"), ("Content-Length", len(body))]) + bytes(body))
        return True

    if path == "/gzip-plain":
        body = whole_feed(5)
        writer.write(head(200, [XML, ("Content-Encoding", "gzip"), ("Content-Length", len(body))]) + body)
        return True

    if path == "/deflate":
        raw = query.get("raw") == "1"
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15 if raw else 15)
        body = compressor.compress(whole_feed(items)) + compressor.flush()
        writer.write(head(200, [XML, ("Content-Encoding", "deflate"), ("Content-Length", len(body))]) + body)
        return True

    if path == "/gzip-members":
        data = whole_feed(items)
        half = len(data) // 2
        body = gzip_bytes(data[:half]) + gzip_bytes(data[half:])
        writer.write(head(200, [XML, ("Content-Encoding", "gzip"), ("Content-Length", len(body))]) + body)
        return True

    if path == "/mislabelled":
        text = ('<rss version="2.0"><channel><title>Caf\u00e9 cr\u00e8me</title>'
                "<item><title>Cr\u00e8me br\u00fbl\u00e9e \u201cn\u00e4ive\u201d</title><guid>1</guid></item>"
                "<item><title>D\u00e9j\u00e0 vu \u2013 \u00fcber</title><guid>2</guid></item></channel></rss>\n")
        body = text.encode(query.get("codec", "utf-8"))
        writer.write(head(200, [("Content-Type", f"application/rss+xml; charset={query.get('charset', 'utf-8')}"),
                                ("Content-Length", len(body))]) + body)
        return True

    if path == "/charset":
        text = ('<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>Новости</title>'
                "<item><title>Привет, мир</title></item></channel></rss>\n")
        body = text.encode("cp1251")
        writer.write(head(200, [("Content-Type", "application/rss+xml; charset=windows-1251"),
                                ("Content-Length", len(body))]) + body)
        return True

    if path == "/empty-headers":
        # Issue 17 (found by fuzzing): header fields present but empty, or nothing but separators, must not crash the
        # parsers of Content-Type, Cache-Control, Retry-After and Link.
        body = whole_feed(items)
        writer.write(head(200, [("Content-Type", ""), ("Content-Length", len(body)), ("Cache-Control", ","),
                                ("Retry-After", ""), ("Link", ";"), ("Content-Encoding", "")]) + body)
        return True

    if path == "/hold":
        record.held += 1
        record.peak_held = max(record.peak_held, record.held)
        try:
            released = await wait_release(token)
        finally:
            record.held -= 1
        if not released:
            return False
        body = whole_feed(1)
        writer.write(head(200, [XML, ("Content-Length", len(body))]) + body)
        return True

    if path == "/big":
        total = int(query.get("bytes", "1000000"))
        prologue, parts, _ = feed(1)
        writer.write(head(200, [XML, ("Transfer-Encoding", "chunked")]))
        writer.write(chunk(prologue))
        sent = len(prologue)
        item = parts[0]
        while sent < total:
            writer.write(chunk(item * 50))
            sent += len(item) * 50
            await writer.drain()
        writer.write(chunk(b"</channel></rss>\n") + b"0\r\n\r\n")
        return True

    if path == "/stats":
        body = json.dumps({"requests": record.requests, "connections": len(record.connections),
                           "held": record.held, "peak_held": record.peak_held}).encode()
        writer.write(head(200, [("Content-Type", "application/json"), ("Content-Length", len(body)),
                                ("Connection", "close")]) + body)
        return False

    if path == "/release":
        record.release.set()
        writer.write(head(200, [("Content-Type", "text/plain"), ("Content-Length", 2), ("Connection", "close")]) + b"ok")
        return False

    writer.write(head(404, [("Content-Type", "text/plain"), ("Content-Length", 9)]) + b"not found")
    return True


class Media:
    """One token's enclosure: its body (a file, or `size` generated bytes), validators and faults, and a request log."""

    def __init__(self):
        self.size = 1 << 20
        self.file = None
        self.etag = '"v1"'
        self.last_modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        self.validators = True      # send ETag and Last-Modified
        self.ignore_range = False   # answer every request with a 200 and the whole body, no Accept-Ranges
        self.rate = 0               # bytes per second, 0 for as fast as possible
        self.reset_after = None     # the next response sends this many body bytes, then a TCP reset (once)
        self.omit_end = False       # the next response is chunked, sends the whole body but not the last chunk, then resets (once)
        self.status = 0             # every request is answered with this error status and a short body; 0 serves the file
        self.log = []


media = {}
_pattern = None


def media_for(token):
    if token not in media:
        media[token] = Media()
    return media[token]


def media_bytes(item, start, end):
    """Bytes [start, end) of the body: the file's, or a fixed pseudo-random pattern (period 1 MiB + 17)."""
    global _pattern
    if item.file:
        with open(item.file, "rb") as f:
            f.seek(start)
            return f.read(end - start)
    if _pattern is None:
        import random
        _pattern = random.Random(14).randbytes((1 << 20) + 17)
    out = bytearray()
    n = len(_pattern)
    while start < end:
        i = start % n
        piece = _pattern[i:min(n, i + end - start)]
        out += piece
        start += len(piece)
    return bytes(out)


def reset(writer):
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def media_route(path, query, headers, writer):
    """The Range-capable enclosure of the download tests (a separate function: other helpers share this server).

    /media-control?token=T[&size=N][&file=PATH][&etag=E][&validators=0|1][&ignore_range=0|1][&rate=B][&reset_after=N]
    [&omit_end=1][&status=C] sets T's enclosure (status=C answers every request with the error status C until status=0); /media-log?token=T returns its requests as JSON (range, if_range,
    accept_encoding, status, start, sent); /media/NAME?token=T serves it.
    """
    token = query.get("token", "")
    item = media_for(token)
    if path == "/media-control":
        for key in ("size", "rate", "reset_after", "status"):
            if key in query:
                setattr(item, key, int(query[key]))
        if "file" in query:
            item.file = query["file"]
            item.size = os.path.getsize(item.file)
        if "etag" in query:
            item.etag = query["etag"]
        for key in ("validators", "ignore_range", "omit_end"):
            if key in query:
                setattr(item, key, query[key] == "1")
        body = b"ok"
        writer.write(head(200, [("Content-Length", len(body)), ("Connection", "close")]) + body)
        return False
    if path == "/media-log":
        body = json.dumps(item.log).encode()
        writer.write(head(200, [("Content-Type", "application/json"), ("Content-Length", len(body)), ("Connection", "close")]) + body)
        return False
    if path == "/media-redirect":
        target = f"http://127.0.0.1:{query.get('port')}{query.get('to', '/media/x')}?token={token}"
        writer.write(head(302, [("Location", target), ("Content-Length", 0)]))
        item.log.append({"redirect": target})
        return True

    size = item.size
    start = 0
    status = 200
    requested = headers.get("range")
    entry = {"range": requested, "if_range": headers.get("if-range"), "accept_encoding": headers.get("accept-encoding"),
             "path": path}
    if item.status:
        body = f"error {item.status}\n".encode()
        entry.update(status=item.status, start=0, sent=0)
        item.log.append(entry)
        writer.write(head(item.status, [("Content-Type", "text/plain"), ("Content-Length", len(body))]) + body)
        return True
    extra = [("Content-Type", "audio/mpeg")]
    if item.validators:
        extra += [("ETag", item.etag), ("Last-Modified", item.last_modified)]
    if not item.ignore_range:
        extra.append(("Accept-Ranges", "bytes"))
        if requested and requested.startswith("bytes=") and requested.endswith("-"):
            condition = headers.get("if-range")
            if condition is None or condition in (item.etag, item.last_modified) and item.validators:
                first = int(requested[6:-1])
                if first >= size:
                    entry.update(status=416, start=first, sent=0)
                    item.log.append(entry)
                    writer.write(head(416, [("Content-Range", f"bytes */{size}"), ("Content-Length", 0)] + extra,
                                      "Range Not Satisfiable"))
                    return True
                start, status = first, 206
                extra.append(("Content-Range", f"bytes {first}-{size - 1}/{size}"))
    entry.update(status=status, start=start, sent=0)
    item.log.append(entry)
    omit_end, item.omit_end = item.omit_end, False
    limit, item.reset_after = item.reset_after, None
    if omit_end:
        writer.write(head(status, extra + [("Transfer-Encoding", "chunked")], "Partial Content" if status == 206 else None))
    else:
        writer.write(head(status, extra + [("Content-Length", size - start)], "Partial Content" if status == 206 else None))
    offset = start
    step = 64 * 1024
    began = time.monotonic()
    while offset < size:
        end = min(size, offset + step)
        if limit is not None and entry["sent"] + (end - offset) >= limit:
            end = offset + max(0, limit - entry["sent"])
            piece = media_bytes(item, offset, end)
            writer.write(chunk(piece) if omit_end else piece)
            entry["sent"] += len(piece)
            await writer.drain()
            await asyncio.sleep(0.05)
            reset(writer)
            return False
        piece = media_bytes(item, offset, end)
        writer.write(chunk(piece) if omit_end else piece)
        entry["sent"] += len(piece)
        offset = end
        await writer.drain()
        if item.rate:
            ahead = entry["sent"] / item.rate - (time.monotonic() - began)
            if ahead > 0:
                await asyncio.sleep(ahead)
    if omit_end:
        await asyncio.sleep(0.05)
        reset(writer)
        return False
    return True


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=256, limit=1 << 16)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    parent = int(sys.argv[sys.argv.index("--parent") + 1]) if "--parent" in sys.argv else None

    def watch():
        # Serve while the parent process lives (polling its pid), or until our standard input closes.
        if parent is None:
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            finally:
                loop.call_soon_threadsafe(stop.set)
            return
        while True:
            try:
                os.kill(parent, 0)
            except OSError:
                break
            time.sleep(0.3)
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=watch, daemon=True).start()
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
