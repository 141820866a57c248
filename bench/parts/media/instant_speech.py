"""An OpenAI-compatible speech server that hears nothing and answers at once, in a process of its
own: what a voice note costs Kindred (decoding, transcoding, the upload) is then all that is timed.

    python -m bench.parts.media.instant_speech PORT

It reads the whole multipart body (as a real server must) and answers `{"text": …}`."""

from __future__ import annotations

import sys

from aiohttp import web


async def transcribe(request: web.Request) -> web.Response:
    form = await request.post()
    upload = form.get("file")
    size = len(upload.file.read()) if isinstance(upload, web.FileField) else 0
    return web.json_response({"text": f"received {size} bytes", "language": "en"})


def main() -> None:
    app = web.Application(client_max_size=64 * 2**20)
    app.router.add_post("/v1/audio/transcriptions", transcribe)
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)


if __name__ == "__main__":
    main()
