"""The SpeechSynthesis port over Debian's `espeak-ng`, run here as a program: no server, no model
to download, a robotic but clear voice in about a hundred languages.

The text goes in on stdin (never as an argument, where a reply beginning with "-" would be read as
an option) and the WAV comes out on stdout, within a time limit; the WAV is encoded as OGG/Opus
(opus.py). A missing program, a failure or a timeout is a MediaError whose line a person may read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil

from bot.core.errors import MediaError, MediaUnsupported
from bot.core.media.models import Speech
from bot.media.tts.opus import ogg_opus

log = logging.getLogger(__name__)

PROGRAM = "espeak-ng"
FAILED = "My voice failed, so I couldn't say that aloud."
TOO_SLOW = "My voice took too long, so I couldn't say that aloud."
MISSING = (
    "I can't say replies aloud here: espeak-ng is not installed; an admin can install it "
    "with: apt-get install espeak-ng"
)
MAX_SECONDS = 600.0


class EspeakVoice:
    """Replies said by espeak-ng. `voice` is one of `espeak-ng --voices` (en, en-gb, de, fr, …)."""

    def __init__(self, *, voice: str = "en", words_per_minute: int = 160, timeout_s: float = 30.0) -> None:
        self.model_name = PROGRAM
        self.voice = voice
        self.words_per_minute = words_per_minute
        self.timeout_s = timeout_s

    async def synthesize(self, text: str, voice: str | None = None) -> Speech:
        program = shutil.which(PROGRAM)
        if program is None:
            raise MediaUnsupported(MISSING)
        said_in = voice or self.voice
        command = [program, "--stdin", "--stdout", "-v", said_in, "-s", str(self.words_per_minute)]
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            wav, errors = await asyncio.wait_for(process.communicate(text.encode("utf-8")), self.timeout_s)
        except TimeoutError:
            log.warning("tts: espeak-ng did not finish within %g s (KINDRED_TTS_TIMEOUT_S)", self.timeout_s)
            raise MediaError(TOO_SLOW) from None
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if process.returncode != 0 or not wav:
            detail = errors.decode("utf-8", "replace").strip()[:200]
            log.warning("tts: espeak-ng failed (exit %s): %s", process.returncode, detail)
            raise MediaError(FAILED)
        return await asyncio.to_thread(ogg_opus, wav, MAX_SECONDS)
