"""What `/help` says in `kindred chat`: every command the terminal takes."""

from __future__ import annotations

HELP = (
    "Type a message and press Enter. Commands:\n"
    "/memories [PAGE] — what I remember about you, newest first\n"
    "/forget ID — forget one memory; /forget all — forget everything (asks first)\n"
    "/confirm ID — tell me a memory is right\n"
    "/correct ID TEXT — tell me what is true instead\n"
    "/react EMOJI — react to my last reply\n"
    "/privacy — what I keep and why; /privacy training on|off — whether your rated replies train me\n"
    "/privacy files keep|delete — whether I keep the files you send me (default: delete once read)\n"
    "/app WHAT — build a small web app for you; /app retry — the last one that did not build\n"
    "/apps — your apps (restore, revoke)\n"
    "/proactive on|off — whether I may write to you first; /reminders [cancel N] — your reminders\n"
    "/persona [NAME] — who I am here, and the others; /persona NAME switches (I remember you either way)\n"
    "/model [NAME] — the model I answer with here, and the others you may use; /model NAME switches\n"
    "/voice on|off — whether I also say my replies aloud (written to a file: a terminal can't play them)\n"
    "/file PATH [CAPTION] — send me a voice note, an audio file, a photo or a document (PDF, .docx, text)\n"
    "/image PATH [CAPTION] — send me a photo or an image from your disk\n"
    "/usage — what you used today and this month (tokens, voice seconds, images)\n"
    "/settings — your choices on one screen; /settings KEY VALUE changes one (/settings training off)\n"
    "/help, /quit. End of input (Ctrl-D) also quits."
)
