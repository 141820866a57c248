"""Kindred's error tree. Implementations map driver and SDK errors onto it once, at the boundary."""


class KindredError(Exception):
    """Base of every error Kindred raises on purpose."""


class ConfigError(KindredError):
    """A setting is missing or invalid. The message names the variable."""


class PlatformUnreachable(KindredError):
    """A chat platform could not be reached (network, proxy, a 5xx). Starting again later may work;
    a refused token is a ConfigError instead, which retrying never fixes."""


class StoreError(KindredError):
    """The store refused an operation for a reason that retrying will not fix."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or written right now (locked, read-only, server gone).

    Callers keep what they meant to write and try again later.
    """


class InferenceError(KindredError):
    """The model could not produce a reply."""


class InferenceTimeout(InferenceError):
    """Generation ran past its time limit."""


class InferenceUnavailable(InferenceError):
    """The inference queue (Redis) cannot be reached, so nothing was asked. Let the person retry."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("busy, try again shortly" + (f" ({detail})" if detail else ""))


class InvalidInput(KindredError):
    """Input from a person or a file that cannot be used as it is. The message says why."""


class MediaError(KindredError):
    """A file a person sent that could not be heard, seen or read (its content, or the backend
    that reads it). The message is one line a person may read; it names no secret."""


class MediaUnsupported(MediaError):
    """No backend is configured for this kind of file, or the extra that reads it is not
    installed. The message says what an admin can do."""


class JobError(KindredError):
    """A job could not be run, or ran and failed. The message carries the job's own error text."""


class JobTimeout(JobError):
    """A job ran past its time limit, or its result did not arrive in the time the caller waited."""


class QueueUnavailable(JobError):
    """The job queue cannot be reached, so nothing was queued. Say so and let the person retry."""

    def __init__(self, detail: str = "") -> None:
        super().__init__("busy, try again shortly" + (f" ({detail})" if detail else ""))


class AppBuildError(KindredError):
    """A mini-app could not be built. The message says why in words the person can act on."""


class DeliveryError(KindredError):
    """A platform did not take a message Kindred sent first (a proactive one, a reminder)."""


class DeliveryUnknown(DeliveryError):
    """The platform may have delivered the message or not (the request was written, then a 5xx or
    no answer came). It is never sent again by itself: sending again could show it twice."""


class RecipientGone(DeliveryError):
    """The person blocked the bot (Telegram 403, Discord 50007) or can no longer be written to."""


class AppBuildBusy(AppBuildError):
    """The person already has as many builds running as allowed: asking again later will work."""


class SharedStateUnavailable(KindredError):
    """The state replicas share (Redis) cannot be reached right now. A webhook answers 503, so
    that the platform delivers the update again later: nothing is lost."""
