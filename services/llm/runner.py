"""`LLMRunner`: the one door to the language models. It is itself an `LLM`, so
`ask_json(runner, …)` works, and adds what every caller needs:

- **A fallback chain.** Providers are tried in order (local first by default). A provider
  that raises `LLMUnavailable` is skipped from then on; one whose single call failed
  (`LLMCallFailed`: a timeout, a prompt too long) is tried again next time.
- **Say so once.** When no provider is left, the call raises `LLMUnavailable` with every
  provider's reason; later calls raise the same at once, without retrying the providers,
  until `reset()` (after the settings change, or at the start of a new REM cycle).
- **One model call at a time** (a lock): llama.cpp is not re-entrant, and two calls at
  once would only halve the speed of each on 2 cores.
- **A bounded LRU cache** of answers keyed by (model id, sha256 of prompt and schema).
  Generation is greedy, so an answer does not change; `ask_json` drops bad answers.
- **A time limit per call**, passed to the provider.
- **Cancellation.** The `cancel` event is checked before each call, while waiting for
  the lock and between providers; sharing the event with `LlamaLocalLLM` also stops a
  local generation after the current token. Reading the prompt inside llama.cpp is one
  native call that cannot be interrupted (well under a second with SmolLM2), and an HTTP
  request runs until its timeout.
- **Unload when idle.** `unload_if_idle()` closes the providers after `idle_unload_s`
  without a call (by the injectable `clock`); a daemon timer calls it after each call
  unless `auto_unload` is off. The next call loads the model again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from services.llm.base import (
    DEFAULT_MAX_TOKENS,
    LLM,
    LLMCallFailed,
    LLMCancelled,
    LLMUnavailable,
)
from services.llm.schema import JSON

log = logging.getLogger(__name__)

DEFAULT_CACHE_SIZE = 256
LOCK_POLL_S = 0.05


def prompt_digest(prompt: str, schema: JSON | None) -> str:
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{prompt}\x00{canonical}".encode()).hexdigest()


class LLMRunner:
    def __init__(
        self,
        providers: Sequence[LLM],
        *,
        timeout_s: float = 60.0,
        idle_unload_s: float = 300.0,
        cache_size: int = DEFAULT_CACHE_SIZE,
        clock: Callable[[], float] = time.monotonic,
        cancel: threading.Event | None = None,
        auto_unload: bool = True,
    ) -> None:
        self._providers = tuple(providers)
        self._timeout_s = timeout_s
        self._idle_unload_s = idle_unload_s
        self._cache_size = cache_size
        self._clock = clock
        self.cancel_event = cancel if cancel is not None else threading.Event()
        self._auto_unload = auto_unload
        self._call_lock = threading.Lock()
        self._state = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._dead: dict[int, LLMUnavailable] = {}
        self._down: str | None = None
        self._loaded: set[int] = set()
        self._last_used = clock()
        self._timer: threading.Timer | None = None
        self.last_model_id: str | None = None
        self.cache_hits = 0

    # --- what the runner is ------------------------------------------------------------

    @property
    def providers(self) -> tuple[LLM, ...]:
        return self._providers

    @property
    def model_id(self) -> str:
        """The model that would answer next (the first provider not given up on)."""
        with self._state:
            live = [p for i, p in enumerate(self._providers) if i not in self._dead]
        chosen = live or list(self._providers)
        return chosen[0].model_id if chosen else "none"

    @property
    def unavailable(self) -> str | None:
        """Why no model works, once every provider failed (None while one may work)."""
        return self._down

    @property
    def loaded(self) -> bool:
        """Whether a provider was used since the last unload (its model may be in memory)."""
        return bool(self._loaded)

    # --- calls ---------------------------------------------------------------------------

    def complete(
        self,
        prompt: str,
        *,
        schema: JSON | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float | None = None,
    ) -> str:
        self._check_cancel()
        self._raise_if_down()
        digest = prompt_digest(prompt, schema)
        cached = self._cached(digest)
        if cached is not None:
            return cached
        with self._acquire():
            self._check_cancel()
            self._raise_if_down()
            cached = self._cached(digest)
            if cached is not None:
                return cached
            return self._ask_chain(prompt, schema, digest, max_tokens, timeout_s)

    def _ask_chain(
        self,
        prompt: str,
        schema: JSON | None,
        digest: str,
        max_tokens: int,
        timeout_s: float | None,
    ) -> str:
        failures: list[LLMUnavailable] = []
        for index, provider in enumerate(self._providers):
            if index in self._dead:
                continue
            self._check_cancel()
            self._loaded.add(index)
            try:
                text = provider.complete(
                    prompt,
                    schema=schema,
                    max_tokens=max_tokens,
                    timeout_s=self._timeout_s if timeout_s is None else timeout_s,
                )
            except LLMCallFailed as error:
                log.info("%s: call failed: %s", provider.model_id, error)
                failures.append(error)
                continue
            except LLMUnavailable as error:
                later = any(i not in self._dead for i in range(index + 1, len(self._providers)))
                log.warning(
                    "%s: unavailable (%s); %s",
                    provider.model_id,
                    error,
                    "trying the next provider"
                    if later
                    else "no other model is configured, so what needs one uses its rules "
                    "and derived text",
                )
                with self._state:
                    self._dead[index] = error
                failures.append(error)
                continue
            finally:
                self._last_used = self._clock()
                self._arm_timer()
            self._remember(provider.model_id, digest, text)
            self.last_model_id = provider.model_id
            return text
        if len(self._dead) == len(self._providers):
            reasons = "; ".join(str(error) for error in self._dead.values())
            with self._state:
                self._down = f"no language model is available: {reasons or 'none configured'}"
            self._raise_if_down()
        kind = next(type(f) for f in failures if isinstance(f, LLMCallFailed))
        raise kind("; ".join(str(error) for error in failures))

    def forget(self, prompt: str, schema: JSON | None) -> None:
        """Drop the cached answers to this prompt (every provider's)."""
        digest = prompt_digest(prompt, schema)
        with self._state:
            for key in [key for key in self._cache if key[1] == digest]:
                del self._cache[key]

    def reset(self) -> None:
        """Try every provider again (after the settings changed or the endpoint is back)."""
        with self._state:
            self._dead.clear()
            self._down = None

    def cancel(self) -> None:
        """Make waiting and later calls raise `LLMCancelled` until `resume()`."""
        self.cancel_event.set()

    def resume(self) -> None:
        self.cancel_event.clear()

    # --- idle unload -------------------------------------------------------------------

    def unload_if_idle(self) -> bool:
        """Close the providers used since the last unload if no call ran for
        `idle_unload_s` (0 keeps them loaded). True when something was unloaded."""
        if self._idle_unload_s <= 0 or not self._loaded:
            return False
        if self._clock() - self._last_used < self._idle_unload_s:
            return False
        if not self._call_lock.acquire(blocking=False):
            return False  # a call is running: not idle
        try:
            if not self._loaded or self._clock() - self._last_used < self._idle_unload_s:
                return False
            self._close_loaded()
            return True
        finally:
            self._call_lock.release()

    def _close_loaded(self) -> None:
        for index in sorted(self._loaded):
            provider = self._providers[index]
            try:
                provider.close()
            except Exception as error:  # unloading must never break the caller
                log.warning("%s: error while unloading: %s", provider.model_id, error)
        self._loaded.clear()
        log.info("language models unloaded")

    def _arm_timer(self) -> None:
        if not self._auto_unload or self._idle_unload_s <= 0:
            return
        with self._state:
            if self._timer is not None:
                self._timer.cancel()
            timer = threading.Timer(self._idle_unload_s, self._on_timer)
            timer.daemon = True
            timer.name = "engram-llm-unload"
            self._timer = timer
        timer.start()

    def _on_timer(self) -> None:
        self.unload_if_idle()

    def close(self) -> None:
        """Stop the unload timer and unload every provider (a later call loads again)."""
        with self._state:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        with self._call_lock:
            self._loaded = set(range(len(self._providers)))
            self._close_loaded()

    # --- helpers ---------------------------------------------------------------------------

    @contextmanager
    def _acquire(self) -> Iterator[None]:
        while not self._call_lock.acquire(timeout=LOCK_POLL_S):
            self._check_cancel()
        try:
            yield
        finally:
            self._call_lock.release()

    def _check_cancel(self) -> None:
        if self.cancel_event.is_set():
            raise LLMCancelled("the language model call was cancelled")

    def _raise_if_down(self) -> None:
        if self._down is not None:
            raise LLMUnavailable(self._down)

    def _cached(self, digest: str) -> str | None:
        with self._state:
            for index, provider in enumerate(self._providers):
                if index in self._dead:
                    continue
                key = (provider.model_id, digest)
                if key in self._cache:
                    self._cache.move_to_end(key)
                    self.cache_hits += 1
                    return self._cache[key]
        return None

    def _remember(self, model_id: str, digest: str, text: str) -> None:
        if self._cache_size <= 0:
            return
        with self._state:
            self._cache[(model_id, digest)] = text
            self._cache.move_to_end((model_id, digest))
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
